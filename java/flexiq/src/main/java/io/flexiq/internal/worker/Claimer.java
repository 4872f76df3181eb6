package io.flexiq.internal.worker;

import io.flexiq.StorageUnavailableException;
import io.flexiq.Worker;
import io.flexiq.internal.observability.Listeners;
import io.flexiq.internal.observability.Trouble;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Claims due jobs for a worker, on a thread of its own, as handler slots free up; waits for
 * wake-ups when there is nothing to claim, and now and then puts back jobs whose lease passed.
 *
 * <p>Each claim carries a fresh random token. When a claim fails without an answer (PostgreSQL
 * became unavailable: the claim may have committed before the connection broke), the slots it
 * asked for stay reserved and the next call, once PostgreSQL answers, recovers the jobs that
 * claim took by their token and runs them, instead of leaving them to lose their leases unrun.
 * Before that, and before any rescue, the first call after a failure extends the leases the
 * worker holds (see {@link LeaseKeeper}).
 */
final class Claimer implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    /** The longest a busy worker waits for more free slots before it claims. */
    private static final long CLAIM_GATHER_MILLIS = 2;
    private static final long FIRST_RETRY_MILLIS = 50;

    private final WorkerStore store;
    private final String[] queues;
    private final String[] tasks;
    private final TaskHandler<?>[] handlers;
    private final int concurrency;
    private final Prefetch prefetch;
    private final Slots slots;
    private final Semaphore unrecorded;
    private final long leaseMillis;
    private final long pollMillis;
    private final Consumer<HeldAttempt> dispatch;
    private final Listeners listeners;
    private final ClaimBuffer buffer;
    private final Trouble trouble;
    /** Extends the worker's leases: the first thing done after a failed call. */
    private final Runnable extendLeases;
    private volatile boolean claiming = true;
    /** Whether the last call failed, so that the leases are extended before anything else. */
    private boolean resuming;
    /** The token of a claim that failed without an answer, and the slots it reserved. */
    private long unresolvedToken;
    private int unresolvedSlots;

    Claimer(WorkerStore store, String[] queues, String[] tasks, TaskHandler<?>[] handlers, int claimBatch,
            int concurrency, Prefetch prefetch, Slots slots, Semaphore unrecorded, long leaseMillis, long pollMillis,
            Consumer<HeldAttempt> dispatch, Runnable extendLeases, Listeners listeners, Trouble outage) {
        this.store = store;
        this.queues = queues;
        this.tasks = tasks;
        this.handlers = handlers;
        this.concurrency = concurrency;
        this.prefetch = prefetch;
        this.slots = slots;
        this.unrecorded = unrecorded;
        this.leaseMillis = leaseMillis;
        this.pollMillis = pollMillis;
        this.dispatch = dispatch;
        this.extendLeases = extendLeases;
        this.listeners = listeners;
        this.trouble = outage.activity("claiming jobs");
        this.buffer = new ClaimBuffer(claimBatch);
    }

    /** Stops claiming; the thread ends after its current call. */
    void stop() {
        claiming = false;
    }

    @Override
    public void run() {
        long lastRescue = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(pollMillis) - 1;
        long retryMillis = FIRST_RETRY_MILLIS;
        while (claiming) {
            try {
                if (resuming) {
                    extendLeases.run();
                    resuming = false;
                }
                if (unresolvedSlots > 0) {
                    recover();
                    continue;
                }
                if (System.nanoTime() - lastRescue > TimeUnit.MILLISECONDS.toNanos(pollMillis)) {
                    Rescues.report(store.rescueExpired(), listeners);
                    lastRescue = System.nanoTime();
                }
                claimOnce();
                trouble.succeeded();
                retryMillis = FIRST_RETRY_MILLIS;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                resuming = true;
                trouble.failed(e, "trying again in " + Math.min(retryMillis, pollMillis) + " ms");
                if (!WorkerEngine.sleep(Math.min(retryMillis, pollMillis))) {
                    return;
                }
                retryMillis = Math.min(2 * retryMillis, pollMillis);
            }
        }
    }

    /** Claims for the free slots, or waits for work. */
    private void claimOnce() throws InterruptedException {
        slots.resize(concurrency + prefetch.now());
        if (!unrecorded.tryAcquire(pollMillis, TimeUnit.MILLISECONDS)) {
            return;
        }
        if (!slots.tryAcquire(pollMillis, TimeUnit.MILLISECONDS)) {
            unrecorded.release();
            return;
        }
        int free = 1 + slots.drainPermits();
        int enough = Math.min(buffer.size(), slots.total()) / 2;
        if (free < enough) {
            // Busy: wait, briefly, for half a claim's worth of free slots, so that claims stay
            // large and few yet go out while the jobs of the last one still run.
            if (slots.tryAcquire(enough - free, CLAIM_GATHER_MILLIS, TimeUnit.MILLISECONDS)) {
                free = enough;
            }
            free += slots.drainPermits();
        }
        int room = 1 + unrecorded.drainPermits();
        int want = Math.min(Math.min(free, room), buffer.size());
        slots.release(free - want);
        unrecorded.release(room - want);
        long token = ThreadLocalRandom.current().nextLong();
        long seen;
        int got;
        try {
            seen = store.workGeneration();
            got = claiming ? store.claim(queues, tasks, want, leaseMillis, token, buffer) : 0;
        } catch (StorageUnavailableException e) {
            // The claim may have committed: keep its slots for the jobs it may have taken.
            unresolvedToken = token;
            unresolvedSlots = want;
            throw e;
        } catch (RuntimeException e) {
            release(want);
            throw e;
        }
        handOut(got);
        release(want - got);
        if (got == 0 && claiming) {
            store.awaitWork(seen, pollMillis);
        }
    }

    /** Gives back what was reserved for {@code n} jobs that were not claimed. */
    private void release(int n) {
        slots.release(n);
        unrecorded.release(n);
    }

    /** Runs the jobs of the claim that failed without an answer, if it took any. */
    private void recover() {
        int got = store.recoverClaim(queues, tasks, leaseMillis, unresolvedToken, buffer);
        if (got > 0) {
            LOG.info("recovered " + got + " jobs whose claim's answer was lost");
        }
        handOut(got);
        release(unresolvedSlots - got);
        unresolvedSlots = 0;
    }

    private void handOut(int got) {
        for (int i = 0; i < got; i++) {
            dispatch.accept(claimed(i));
        }
    }

    /** The buffer's {@code i}th job, taken out of it. */
    private HeldAttempt claimed(int i) {
        ClaimBuffer b = buffer;
        HeldAttempt a = new HeldAttempt(b.ids[i], b.attempts[i], b.maxAttempts[i], b.timeouts[i],
                queues[b.queueIndexes[i]], handlers[b.taskIndexes[i]], b.payloads[i], b.payloadCodecs[i],
                b.waitedMicros[i], b.traceContexts[i]);
        b.payloads[i] = null;
        b.payloadCodecs[i] = null;
        b.traceContexts[i] = null;
        return a;
    }

    /**
     * After the thread ended: the jobs of a claim still unresolved, recovered if PostgreSQL
     * answers, for the worker to give back; empty otherwise.
     */
    void recoverUnresolved(Consumer<HeldAttempt> giveBack) {
        if (unresolvedSlots == 0) {
            return;
        }
        try {
            int got = store.recoverClaim(queues, tasks, leaseMillis, unresolvedToken, buffer);
            for (int i = 0; i < got; i++) {
                giveBack.accept(claimed(i));
            }
        } catch (RuntimeException e) {
            LOG.warn("a claim made just before closing got no answer and could not be"
                    + " checked; any jobs it took run again once their leases pass: " + e.getMessage());
        }
        unresolvedSlots = 0;
    }
}
