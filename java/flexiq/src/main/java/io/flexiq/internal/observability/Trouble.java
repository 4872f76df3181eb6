package io.flexiq.internal.observability;

import io.flexiq.StorageUnavailableException;
import io.flexiq.Worker;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A run of failures, logged so that it says what it interrupted and when it ended without
 * filling the log: the first failure as a warning, then at most one warning a minute while the
 * run lasts (every failure at debug level, with its stack trace), and its end as information.
 * A run ends at the first success {@value #SETTLE_MILLIS} ms or more after its last failure, so
 * that a server shutting down, which still serves some connections while it refuses others,
 * makes one run, not many.
 *
 * <p>A client has one for PostgreSQL being unavailable, shared by all its workers' activities
 * ({@link #outage}), so that an outage is reported once however many threads notice it; each
 * activity has one of its own for other failures, and hands unavailability on to the outage.
 */
public final class Trouble {
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    /** The least time between two warnings about one run of failures. */
    static final long REPEAT_NANOS = TimeUnit.MINUTES.toNanos(1);
    static final long SETTLE_MILLIS = 2_000;

    /** What fails, for the run's repeats and end: an activity, or reaching PostgreSQL. */
    private final String subject;
    /** Where this activity's unavailability goes; null for the outage itself. */
    private final Trouble outage;
    private final LongSupplier nanoClock;
    private int failures;
    private long firstNanos;
    private long warnedNanos;
    private long lastFailureNanos;

    private Trouble(String subject, Trouble outage, LongSupplier nanoClock) {
        this.subject = subject;
        this.outage = outage;
        this.nanoClock = nanoClock;
    }

    /** A client's run of failures to reach PostgreSQL. */
    public static Trouble outage(LongSupplier nanoClock) {
        return new Trouble("reaching PostgreSQL", null, nanoClock);
    }

    /** An activity's failures; {@code activity} completes "… failed", e.g. "claiming jobs". */
    public Trouble activity(String activity) {
        return new Trouble(activity, this, nanoClock);
    }

    /** Reports a failure; {@code next} says what happens now, e.g. "trying again in 50 ms". */
    public void failed(RuntimeException e, String next) {
        if (outage != null && e instanceof StorageUnavailableException) {
            outage.record(subject, e, next);
        } else {
            record(subject, e, next);
        }
    }

    private synchronized void record(String activity, RuntimeException e, String next) {
        long now = nanoClock.getAsLong();
        lastFailureNanos = now;
        failures++;
        if (failures == 1) {
            firstNanos = now;
            warnedNanos = now;
            LOG.warn("{} failed; {}: {}", activity, next, e.getMessage());
        } else if (now - warnedNanos >= REPEAT_NANOS) {
            warnedNanos = now;
            LOG.warn("{} still fails after {} s ({} failures in a row); {} failed; {}: {}", subject,
                    TimeUnit.NANOSECONDS.toSeconds(now - firstNanos), failures, activity, next, e.getMessage());
        }
        LOG.debug("{} failed ({} in a row); {}", activity, failures, next, e);
    }

    /** Reports a success, which ends a run of failures, and an outage. */
    public void succeeded() {
        end();
        if (outage != null) {
            outage.end();
        }
    }

    private synchronized void end() {
        long now = nanoClock.getAsLong();
        if (failures > 0 && now - lastFailureNanos >= TimeUnit.MILLISECONDS.toNanos(SETTLE_MILLIS)) {
            LOG.info("{} works again after {} failures over {} ms", subject, failures,
                    TimeUnit.NANOSECONDS.toMillis(lastFailureNanos - firstNanos));
            failures = 0;
        }
    }
}
