package io.flexiq.internal.schedule;

import io.flexiq.DeclaredSchedule;
import io.flexiq.EnqueueOptions;
import io.flexiq.RetryPolicy;
import io.flexiq.Schedule;
import io.flexiq.internal.NativeBridge;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Schedules as PostgreSQL keeps their declarations (table {@code schedules}): what a declaring
 * process writes before each tick, and what any client reads, pauses and triggers.
 */
public final class Declarations {
    private final long handle;

    /** The declarations of the schema of the client with native {@code handle}. */
    public Declarations(long handle) {
        this.handle = handle;
    }

    /**
     * Declares {@code schedule}, or renews its declaration; returns whether it is paused. The
     * payload and options a trigger needs are stored unless {@code payloadsEncoded} (they would be
     * stored unencrypted) or the options use what the SQL function enqueue cannot repeat.
     */
    boolean declare(Schedule<?> schedule, byte[] serialized, boolean payloadsEncoded) {
        String options = payloadsEncoded ? null : triggerOptions(schedule.options());
        return NativeBridge.declareSchedule(handle, schedule.name(), schedule.cron(),
                Scheduler.zoneName(schedule.zone()), schedule.task().name(), schedule.options().queue(),
                options == null ? null : serialized, options);
    }

    /** Every declared schedule, with its last and next tick and the last tick's job. */
    public List<DeclaredSchedule> list() {
        Instant now = Instant.now();
        List<DeclaredSchedule> out = new ArrayList<>();
        for (NativeBridge.Declared d : NativeBridge.listSchedules(handle)) {
            NativeBridge.CronTicks ticks = NativeBridge.cronTicks(d.cron(), d.zone(), now);
            Optional<String> lastJob = Optional.ofNullable(ticks.latest())
                    .map(tick -> NativeBridge.findByKey(handle, Schedule.KEY_SCOPE, NativeBridge.tickKey(d.name(), tick)))
                    .map(job -> Long.toString(job.id()));
            out.add(new DeclaredSchedule(d.name(), d.cron(), ZoneId.of(d.zone()), d.task(), d.queue(),
                    Optional.ofNullable(ticks.latest()), lastJob, ticks.next(), d.triggerable(), d.seenAt(),
                    Optional.ofNullable(d.pausedAt())));
        }
        return out;
    }

    /** Pauses or resumes schedule {@code name}; whether that changed it. */
    public boolean pause(String name, boolean paused) {
        return NativeBridge.pauseSchedule(handle, name, paused);
    }

    /**
     * Enqueues schedule {@code name} as a tick at {@code at} would be keyed: the same {@code at}
     * twice enqueues once. Returns the job id and "accepted", "replayed" or "conflict".
     *
     * @throws IllegalArgumentException if there is no such schedule, or it cannot be triggered
     */
    public String[] trigger(String name, Instant at) {
        // The declaration alone: list() would also look up every schedule's last tick.
        NativeBridge.Declared declared = NativeBridge.listSchedules(handle).stream()
                .filter(s -> s.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no schedule named " + name + " is declared on this"
                        + " schema; declare it with FlexiQ.schedule(...) in a process first"));
        NativeBridge.CronTicks ticks = NativeBridge.cronTicks(declared.cron(), declared.zone(), at);
        Duration retention = Duration.between(at, ticks.next()).plus(Scheduler.KEY_MARGIN);
        String[] job = NativeBridge.triggerSchedule(handle, name, NativeBridge.tickKey(name, at), retention.toMillis());
        if (job == null) {
            throw new IllegalArgumentException("schedule " + name + " cannot be triggered from here: its declaring"
                    + " client encrypts payloads or its options use flow control; enqueue its task yourself");
        }
        return job;
    }

    /**
     * The options of a schedule's jobs in the SQL function enqueue's form, or null when it
     * cannot say them (flow control). The queue and the key's retention are added at the trigger.
     */
    static String triggerOptions(EnqueueOptions o) {
        if (o.deadline().isPresent() || o.concurrencyKey().isPresent() || o.debounce().isPresent()
                || o.throttle().isPresent()) {
            return null;
        }
        RetryPolicy retry = o.retryPolicy();
        StringBuilder json = new StringBuilder("{\"priority\":").append(o.priority()).append(",\"maxAttempts\":")
                .append(o.maxAttempts()).append(String.format(Locale.ROOT, ",\"retryPolicy\":{\"initialMs\":%d,"
                        + "\"maxMs\":%d,\"multiplier\":%s,\"jitter\":%s}", retry.initialDelay().toMillis(),
                        retry.maxDelay().toMillis(), Double.toString(retry.multiplier()), Double.toString(retry.jitter())));
        o.timeout().ifPresent(t -> json.append(",\"timeoutMs\":").append(t.toMillis()));
        json.append(",\"tags\":[");
        String separator = "";
        for (String tag : o.tags()) {
            json.append(separator).append(quoted(tag));
            separator = ",";
        }
        return json.append("]}").toString();
    }

    private static String quoted(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }
}
