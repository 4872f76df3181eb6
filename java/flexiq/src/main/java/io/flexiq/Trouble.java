package io.flexiq;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker activity's run of failures (an outage, mostly), logged so that it says what it
 * interrupted and when it ended without filling the log: the first failure as a warning, then
 * at most one warning a minute while the failures last (each failure at debug level, with its
 * stack trace), and the end of the run as information.
 */
final class Trouble {
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    /** The least time between two warnings about one run of failures. */
    static final long REPEAT_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final String activity;
    private final LongSupplier nanoClock;
    private int failures;
    private long firstNanos;
    private long warnedNanos;

    /** {@code activity} completes "… failed", e.g. "claiming jobs". */
    Trouble(String activity) {
        this(activity, System::nanoTime);
    }

    Trouble(String activity, LongSupplier nanoClock) {
        this.activity = activity;
        this.nanoClock = nanoClock;
    }

    /** Reports a failure; {@code next} says what happens now, e.g. "trying again in 50 ms". */
    synchronized void failed(RuntimeException e, String next) {
        long now = nanoClock.getAsLong();
        failures++;
        if (failures == 1) {
            firstNanos = now;
            warnedNanos = now;
            LOG.warn("{} failed; {}: {}", activity, next, e.getMessage());
        } else if (now - warnedNanos >= REPEAT_NANOS) {
            warnedNanos = now;
            LOG.warn("{} still fails after {} s ({} failures in a row); {}: {}", activity,
                    TimeUnit.NANOSECONDS.toSeconds(now - firstNanos), failures, next, e.getMessage());
        }
        LOG.debug("{} failed ({} in a row); {}", activity, failures, next, e);
    }

    /** Reports a success, which ends a run of failures. */
    synchronized void succeeded() {
        if (failures > 0) {
            LOG.info("{} works again after {} failures over {} ms", activity, failures,
                    TimeUnit.NANOSECONDS.toMillis(nanoClock.getAsLong() - firstNanos));
            failures = 0;
        }
    }
}
