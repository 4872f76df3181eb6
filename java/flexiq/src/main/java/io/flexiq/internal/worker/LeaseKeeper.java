package io.flexiq.internal.worker;

import io.flexiq.Worker;
import io.flexiq.internal.observability.Trouble;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
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
 */
final class LeaseKeeper {
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);

    private final WorkerStore store;
    private final HeldAttempts held;
    private final long leaseMillis;
    private final ScheduledExecutorService thread;
    private final Trouble trouble;

    LeaseKeeper(WorkerStore store, HeldAttempts held, long leaseMillis, ThreadFactory threads, Trouble outage) {
        this.store = store;
        this.trouble = outage.activity("extending the leases of running jobs");
        this.held = held;
        this.leaseMillis = leaseMillis;
        this.thread = Executors.newSingleThreadScheduledExecutor(threads);
    }

    void start() {
        long every = Math.max(1, leaseMillis / 3);
        thread.scheduleWithFixedDelay(this::extend, every, every, TimeUnit.MILLISECONDS);
    }

    void stop() {
        thread.shutdownNow();
    }

    private void extend() {
        List<HeldAttempt> snapshot = held.snapshot();
        if (snapshot.isEmpty()) {
            return;
        }
        long[] kept;
        try {
            kept = store.extendLeases(HeldAttempt.ids(snapshot), HeldAttempt.attempts(snapshot), leaseMillis);
        } catch (RuntimeException e) {
            trouble.failed(e, "trying again in " + Math.max(1, leaseMillis / 3) + " ms");
            return;
        }
        trouble.succeeded();
        Set<Long> stillHeld = new HashSet<>();
        for (long id : kept) {
            stillHeld.add(id);
        }
        for (HeldAttempt a : snapshot) {
            if (!stillHeld.contains(a.id) && held.remove(a) && a.settle()) {
                LOG.warn(a + " lost its lease (it passed, and the job moved on);"
                        + " its handler is interrupted and its outcome will not be recorded");
                a.interruptIfRunning();
            }
        }
    }
}
