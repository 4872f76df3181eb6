package io.flexiq.internal.schedule;

import io.flexiq.EnqueueOptions;
import io.flexiq.EnqueueOutcome;
import io.flexiq.EnqueueResult;
import io.flexiq.IdempotencyConflictException;
import io.flexiq.JobQueue;
import io.flexiq.MissedTicks;
import io.flexiq.PayloadSerializer;
import io.flexiq.Schedule;
import io.flexiq.ScheduleHandle;
import io.flexiq.StorageException;
import io.flexiq.internal.NativeBridge;
import io.flexiq.internal.observability.Trouble;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Enqueues the ticks of a client's schedules, on one daemon thread started with the first
 * schedule. It sleeps until the earliest due tick, enqueues it under the tick's key and moves on;
 * other processes declaring the same schedule enqueue the same key, and PostgreSQL's unique index
 * makes one of them win, so no process is elected.
 *
 * <p>A tick is never enqueued twice by this thread and a backlog is never made up: when it wakes
 * late (after a pause, or PostgreSQL failing until the next tick was due), it enqueues the latest
 * tick due, only. Failures to reach PostgreSQL retry with backoff and go to the client's outage
 * report; a conflicting declaration elsewhere, or a payload that does not serialize, is logged
 * as an error and that tick left to the others.
 */
public final class Scheduler {
    /** The logger it has always had, named for the class when it was in {@code io.flexiq}. */
    private static final Logger LOG = LoggerFactory.getLogger("io.flexiq.Scheduler");
    /**
     * How long a tick's key outlives the next tick: a process whose clock is behind, or that
     * starts with {@link MissedTicks#LATEST} just as the next tick comes, still finds the key.
     */
    static final Duration KEY_MARGIN = Duration.ofHours(1);
    private static final long FIRST_RETRY_MILLIS = 100;
    private static final long LAST_RETRY_MILLIS = 5_000;
    /** The least time between two error lines about one schedule's conflicts. */
    private static final long CONFLICT_REPEAT_NANOS = TimeUnit.MINUTES.toNanos(1);

    /** Where the ticks are enqueued: the client. */
    private final JobQueue queue;
    private final String schema;
    private final PayloadSerializer serializer;
    private final Trouble outage;
    private final Declarations declarations;
    /** Whether the client encodes payloads: their serialized form then stays out of declarations. */
    private final boolean payloadsEncoded;
    private final Map<String, Entry> entries = new LinkedHashMap<>();
    private Thread thread;
    private boolean closed;

    /**
     * The scheduler of the client {@code queue} of {@code schema}, whose payloads
     * {@code serializer} serializes and whose outage is {@code outage}.
     */
    public Scheduler(JobQueue queue, String schema, PayloadSerializer serializer, Trouble outage,
            Declarations declarations, boolean payloadsEncoded) {
        this.queue = queue;
        this.schema = schema;
        this.serializer = serializer;
        this.outage = outage;
        this.declarations = declarations;
        this.payloadsEncoded = payloadsEncoded;
    }

    /** A schedule's zone as the core reads it: an IANA name, with {@code UTC} for the zero offset. */
    public static String zoneName(ZoneId zone) {
        return zone instanceof ZoneOffset offset && offset.getTotalSeconds() == 0 ? "UTC" : zone.getId();
    }

    /** Declares a schedule; its first tick is the latest past one or the next one, by its policy. */
    public synchronized ScheduleHandle add(Schedule<?> schedule) {
        if (closed) {
            throw new IllegalStateException("this FlexiQ client is closed");
        }
        if (entries.containsKey(schedule.name())) {
            throw new IllegalArgumentException("schedule " + schedule.name() + " is already declared on this client;"
                    + " give each schedule its own name, or close the first one's handle before declaring it again");
        }
        // Refuses a payload that does not serialize now rather than at every tick.
        byte[] serialized = serializer.serialize(schedule.payload());
        Instant now = Instant.now();
        NativeBridge.CronTicks ticks = NativeBridge.cronTicks(schedule.cron(), zoneName(schedule.zone()), now);
        Instant first = schedule.missedTicks() == MissedTicks.LATEST && ticks.latest() != null ? ticks.latest()
                : ticks.next();
        Entry entry = new Entry(schedule, serialized, first, now, outage.activity("enqueueing ticks of " + schedule));
        entries.put(schedule.name(), entry);
        if (thread == null) {
            thread = new Thread(this::run, "flexiq-scheduler-" + schema);
            thread.setDaemon(true);
            thread.start();
        }
        notifyAll();
        LOG.info("{} declared; first tick {}{}", schedule, first,
                first.isAfter(now) ? "" : " (missed, enqueued now)");
        return entry;
    }

    /** Stops every schedule and waits a little for a running enqueue; idempotent. */
    public void close() {
        Thread t;
        synchronized (this) {
            closed = true;
            entries.clear();
            notifyAll();
            t = thread;
        }
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private synchronized void remove(Entry entry) {
        if (entries.remove(entry.schedule.name(), entry)) {
            notifyAll();
            LOG.info("{} closed: this client enqueues no more of its ticks", entry.schedule);
        }
    }

    private void run() {
        try {
            for (Entry entry = nextDue(); entry != null; entry = nextDue()) {
                entry.fire();
            }
        } catch (IllegalStateException closedUnderUs) {
            LOG.debug("scheduler of schema {} stops: the client is closed", schema);
        }
    }

    /** Waits for the earliest entry to be due; null once closed. */
    private synchronized Entry nextDue() {
        while (!closed) {
            Entry earliest = null;
            for (Entry e : entries.values()) {
                if (earliest == null || e.wakeAt.isBefore(earliest.wakeAt)) {
                    earliest = e;
                }
            }
            long waitNanos = earliest == null ? 0 : Duration.between(Instant.now(), earliest.wakeAt).toNanos();
            if (earliest != null && waitNanos <= 0) {
                return earliest;
            }
            // Rounded up: waking before the tick would only mean waiting again.
            long waitMillis = (waitNanos + 999_999) / 1_000_000;
            try {
                wait(waitMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
        return null;
    }

    /**
     * One declared schedule; its tick state changes on the scheduler's thread only. It wakes at
     * once to write its declaration, then at each tick, whose declaration it renews first.
     */
    private final class Entry implements ScheduleHandle {
        private final Schedule<?> schedule;
        private final byte[] serialized;
        private final Trouble trouble;
        /** The earliest tick not yet enqueued. */
        private Instant due;
        /** When to act next: {@link #due}, or sooner to retry a failed enqueue (guarded by the scheduler). */
        private Instant wakeAt;
        private long retryMillis = FIRST_RETRY_MILLIS;
        private long conflictLoggedNanos;
        private String conflictLogged;

        Entry(Schedule<?> schedule, byte[] serialized, Instant first, Instant now, Trouble trouble) {
            this.schedule = schedule;
            this.serialized = serialized;
            this.trouble = trouble;
            this.due = first;
            this.wakeAt = first.isBefore(now) ? first : now;
        }

        @Override
        public Schedule<?> schedule() {
            return schedule;
        }

        @Override
        public void close() {
            remove(this);
        }

        /**
         * Renews the declaration; then, if a tick is due and the schedule is not paused, enqueues
         * the latest tick due (at or after {@link #due}); then waits for the next.
         */
        void fire() {
            Instant now = Instant.now();
            boolean paused;
            try {
                paused = declarations.declare(schedule, serialized, payloadsEncoded);
            } catch (StorageException e) {
                long wait = Math.min(retryMillis, Math.max(1, Duration.between(now, due).toMillis()));
                retryMillis = Math.min(retryMillis * 2, LAST_RETRY_MILLIS);
                trouble.failed(e, "declaring it again in " + wait + " ms");
                reschedule(due, now.plusMillis(wait));
                return;
            }
            if (now.isBefore(due)) {
                // Woken to declare it: the tick is still to come.
                reschedule(due, due);
                return;
            }
            NativeBridge.CronTicks ticks = NativeBridge.cronTicks(schedule.cron(), zoneName(schedule.zone()), now);
            Instant tick = ticks.latest();
            if (tick == null || tick.isBefore(due)) {
                // The clock went back: wait for the tick again.
                reschedule(due, due);
                return;
            }
            if (paused) {
                LOG.info("{}: tick {} not enqueued: the schedule is paused", schedule, tick);
                reschedule(ticks.next(), ticks.next());
                return;
            }
            // The key outlives the next tick: a later process replays instead of enqueueing this tick again.
            Duration retention = Duration.between(tick, ticks.next()).plus(KEY_MARGIN);
            try {
                EnqueueResult result = enqueue(schedule, tick, retention);
                trouble.succeeded();
                LOG.debug("{}: tick {} {} as job {}", schedule, tick,
                        result.outcome() == EnqueueOutcome.ACCEPTED ? "enqueued" : "already enqueued", result.jobId());
                conflictLogged = null;
            } catch (StorageException e) {
                long wait = Math.min(retryMillis, Math.max(0, Duration.between(now, ticks.next()).toMillis()));
                retryMillis = Math.min(retryMillis * 2, LAST_RETRY_MILLIS);
                trouble.failed(e, "trying tick " + tick + " again in " + wait + " ms, or the latest tick once the next"
                        + " is due");
                reschedule(tick, now.plusMillis(wait));
                return;
            } catch (IdempotencyConflictException e) {
                conflict(tick, e);
            } catch (IllegalStateException e) {
                throw e;
            } catch (RuntimeException e) {
                LOG.error("{}: tick {} was not enqueued and will not be retried: {}", schedule, tick, e.getMessage(), e);
            }
            retryMillis = FIRST_RETRY_MILLIS;
            reschedule(ticks.next(), ticks.next());
        }

        private void conflict(Instant tick, IdempotencyConflictException e) {
            String fields = String.join(", ", e.fields());
            long now = System.nanoTime();
            if (fields.equals(conflictLogged) && now - conflictLoggedNanos < CONFLICT_REPEAT_NANOS) {
                LOG.debug("{}: tick {} conflicts again ({})", schedule, tick, fields);
                return;
            }
            conflictLogged = fields;
            conflictLoggedNanos = now;
            LOG.error("{}: tick {} was enqueued by another declaration of schedule {} (job {}) that differs in {};"
                    + " this client's tick was not enqueued. Declare the schedule alike in every process, or give"
                    + " the different one another name", schedule, tick, schedule.name(),
                    e.existingJobId().orElse("?"), fields);
        }

        private void reschedule(Instant nextDue, Instant nextWake) {
            synchronized (Scheduler.this) {
                due = nextDue;
                wakeAt = nextWake;
            }
        }
    }

    private <T> EnqueueResult enqueue(Schedule<T> schedule, Instant tick, Duration retention) {
        EnqueueOptions options = schedule.options().toBuilder()
                .idempotencyKey(NativeBridge.tickKey(schedule.name(), tick))
                .scope(Schedule.KEY_SCOPE)
                .keyRetention(retention)
                .runAt(tick)
                .build();
        return queue.enqueueWithResult(schedule.task(), schedule.payload(), options);
    }
}
