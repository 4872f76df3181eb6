package io.flexiq;

import io.flexiq.internal.Limits;
import io.flexiq.internal.NativeBridge;
import io.flexiq.internal.schedule.Scheduler;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;

/**
 * A cron schedule: a task and payload to enqueue at every tick of a cron expression, read in a
 * time zone. Immutable; built by {@link #builder}, declared with {@link FlexiQ#schedule(Schedule)}.
 *
 * <pre>{@code
 * Schedule<Report> nightly = Schedule.builder("nightly-report", "30 2 * * *", BUILD_REPORT, new Report("daily"))
 *         .zone(ZoneId.of("Europe/Berlin"))
 *         .options(EnqueueOptions.builder().queue("reports").build())
 *         .build();
 * }</pre>
 *
 * <p>Every process of a service may declare the same schedule: each tick is enqueued once, under
 * an idempotency key derived from the schedule's name and the tick's instant, in the key scope
 * {@value #KEY_SCOPE}. The job is due at the tick's instant.
 *
 * <p>Expressions have 5 fields (minute, hour, day of month, month, day of week) or 6 with seconds
 * first; {@code @hourly}, {@code @daily}, {@code @weekly}, {@code @monthly} and {@code @yearly}
 * work too. Around daylight saving changes, a fixed time of day that does not exist that day
 * (02:30 when clocks jump from 02:00 to 03:00) runs once, right after the gap, and one that
 * happens twice runs once, at its first occurrence; schedules with a wildcard or step in the
 * second, minute or hour field follow real time.
 *
 * @param <T> the payload type
 */
public final class Schedule<T> {
    /** The key scope of every tick's idempotency key, apart from the application's keys. */
    public static final String KEY_SCOPE = "flexiq.schedule";

    private final String name;
    private final String cron;
    private final ZoneId zone;
    private final Task<T> task;
    private final T payload;
    private final EnqueueOptions options;
    private final MissedTicks missedTicks;

    private Schedule(Builder<T> b) {
        this.name = b.name;
        this.cron = b.cron;
        this.zone = b.zone;
        this.task = b.task;
        this.payload = b.payload;
        this.options = b.options;
        this.missedTicks = b.missedTicks;
    }

    /**
     * Starts a builder for the schedule {@code name}, enqueueing {@code payload} for {@code task}
     * at every tick of {@code cron} (in UTC unless {@link Builder#zone} says otherwise).
     *
     * @throws IllegalArgumentException if an argument is null
     */
    public static <T> Builder<T> builder(String name, String cron, Task<T> task, T payload) {
        return new Builder<>(name, cron, task, payload);
    }

    /** The schedule's name: one schedule per name and client, shared by every process declaring it. */
    public String name() {
        return name;
    }

    /** The cron expression. */
    public String cron() {
        return cron;
    }

    /** The time zone the expression's wall-clock fields are read in. */
    public ZoneId zone() {
        return zone;
    }

    /** The task each tick enqueues. */
    public Task<T> task() {
        return task;
    }

    /** The payload each tick enqueues. */
    public T payload() {
        return payload;
    }

    /** The options of each tick's job, without a key: the schedule sets the key and the due time. */
    public EnqueueOptions options() {
        return options;
    }

    /** What happens to ticks that passed while no process declaring the schedule ran. */
    public MissedTicks missedTicks() {
        return missedTicks;
    }

    @Override
    public String toString() {
        return "schedule " + name + " (" + cron + " in " + Scheduler.zoneName(zone) + ", task " + task.name()
                + ")";
    }

    /** Builds a {@link Schedule}. */
    public static final class Builder<T> {
        private final String name;
        private final String cron;
        private final Task<T> task;
        private final T payload;
        private ZoneId zone = ZoneOffset.UTC;
        private EnqueueOptions options = EnqueueOptions.defaults();
        private MissedTicks missedTicks = MissedTicks.LATEST;

        private Builder(String name, String cron, Task<T> task, T payload) {
            this.name = requireArgument("name", name);
            this.cron = requireArgument("cron", cron);
            this.task = requireArgument("task", task);
            this.payload = payload;
        }

        /** The time zone the expression's wall-clock fields are read in (default UTC). */
        public Builder<T> zone(ZoneId zone) {
            this.zone = requireArgument("zone", zone);
            return this;
        }

        /**
         * The options of each tick's job: queue, priority, attempts, retry policy, tags, timeout.
         * The schedule sets the key, its scope and retention, and the due time itself.
         *
         * @throws IllegalArgumentException if the options set a key ({@code uniqueKey},
         *     {@code idempotencyKey}, {@code idempotent}), a {@code scope}, a {@code keyRetention},
         *     a {@code runAt}, a {@code delay}, a {@code debounce} or a {@code throttle}
         */
        public Builder<T> options(EnqueueOptions options) {
            requireArgument("options", options);
            String set = options.uniqueKey().isPresent() ? "uniqueKey"
                    : options.idempotencyKey().isPresent() ? "idempotencyKey"
                    : options.idempotent().isPresent() ? "idempotent"
                    : !options.scope().equals(EnqueueOptions.DEFAULT_SCOPE) ? "scope"
                    : options.keyRetention().isPresent() ? "keyRetention"
                    : options.runAt().isPresent() ? "runAt"
                    : options.delay().isPresent() ? "delay"
                    : options.debounce().isPresent() ? "debounce"
                    : options.throttle().isPresent() ? "throttle"
                    : null;
            if (set != null) {
                throw new IllegalArgumentException("the options of schedule " + name + " set " + set
                        + ": leave it out; each tick's job is due at the tick and is enqueued under a key of its own"
                        + " (scope " + KEY_SCOPE + ") derived from the schedule's name and the tick");
            }
            this.options = options;
            return this;
        }

        /** What happens to ticks missed while no process declaring the schedule ran (default {@link MissedTicks#LATEST}). */
        public Builder<T> missedTicks(MissedTicks missedTicks) {
            this.missedTicks = requireArgument("missedTicks", missedTicks);
            return this;
        }

        /**
         * The immutable schedule.
         *
         * @throws IllegalArgumentException if the name is blank, empty, over 128 bytes of UTF-8 or
         *     contains NUL; if the cron expression does not parse or never fires; or if the zone is
         *     not an IANA time zone the core knows (the message says which and what to write)
         */
        public Schedule<T> build() {
            Instant now = Instant.now();
            // The core checks the name, the expression and the zone, as every binding does.
            NativeBridge.tickKey(Limits.name("schedule name", name), now);
            NativeBridge.cronTicks(Limits.text("cron expression", cron), Scheduler.zoneName(zone), now);
            return new Schedule<>(this);
        }

        private static <V> V requireArgument(String what, V value) {
            if (value == null) {
                throw new IllegalArgumentException(what + " must not be null");
            }
            return value;
        }
    }
}
