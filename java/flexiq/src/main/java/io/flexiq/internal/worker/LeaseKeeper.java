package io.flexiq.internal.worker;

import io.flexiq.Worker;
import io.flexiq.internal.observability.Trouble;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the leases of a worker's held attempts, on a thread of its own: a lease extension that
 * waits on PostgreSQL delays nothing else. An attempt that no longer holds its job (its lease
 * passed and the job moved on) is dropped and its handler interrupted, for another attempt of
 * the job may be running elsewhere.
 *
 * <p>Leases are extended every third of the lease. While PostgreSQL does not answer, the
 * extension is tried again every {@value #RETRY_MILLIS} ms at most, and the claimer, once its
 * own calls go through again, extends the leases before it rescues or claims anything: the
 * leases of running and finished attempts come first after an outage.
 */
final class LeaseKeeper {
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    /** The longest between tries while PostgreSQL does not answer. */
    static final long RETRY_MILLIS = 250;

    private final WorkerStore store;
    private final HeldAttempts held;
    private final long leaseMillis;
    private final long everyMillis;
    private final ScheduledExecutorService thread;
    private final Trouble trouble;

    LeaseKeeper(WorkerStore store, HeldAttempts held, long leaseMillis, ThreadFactory threads, Trouble outage) {
        this.store = store;
        this.trouble = outage.activity("extending the leases of running jobs");
        this.held = held;
        this.leaseMillis = leaseMillis;
        this.everyMillis = Math.max(1, leaseMillis / 3);
        this.thread = Executors.newSingleThreadScheduledExecutor(threads);
    }

    void start() {
        next(everyMillis);
    }

    void stop() {
        thread.shutdownNow();
    }

    private void next(long delayMillis) {
        try {
            thread.schedule(this::keep, delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopped) {
            // The worker is closing.
        }
    }

    private void keep() {
        long retryMillis = Math.min(everyMillis, RETRY_MILLIS);
        try {
            extend();
        } catch (RuntimeException e) {
            trouble.failed(e, "trying again in " + retryMillis + " ms");
            next(retryMillis);
            return;
        }
        trouble.succeeded();
        next(everyMillis);
    }

    /**
     * Extends the leases of the attempts held now, on the caller's thread; for the claimer,
     * back in touch with PostgreSQL after an outage, before anything else.
     *
     * @throws RuntimeException what the extension threw (PostgreSQL still unavailable)
     */
    synchronized void extend() {
        List<HeldAttempt> snapshot = held.snapshot();
        if (snapshot.isEmpty()) {
            return;
        }
        long[] kept = store.extendLeases(HeldAttempt.ids(snapshot), HeldAttempt.attempts(snapshot), leaseMillis);
        Set<Long> stillHeld = new HashSet<>();
        for (long id : kept) {
            stillHeld.add(id);
        }
        for (HeldAttempt a : snapshot) {
            if (!stillHeld.contains(a.id) && held.remove(a) && a.settle()) {
                JobMdc.around(a, () -> {
                    LOG.warn("{} no longer holds its job (its lease passed and the job moved on, or a crash of"
                            + " PostgreSQL forgot its claim); its handler is interrupted and its outcome will not be"
                            + " recorded", a);
                });
                a.interruptIfRunning();
            }
        }
    }
}
