package io.flexiq;

import io.flexiq.internal.NativeBridge;
import io.flexiq.internal.worker.ClaimBuffer;
import io.flexiq.internal.worker.ForwardingStore;
import io.flexiq.internal.worker.NativeWorkerStore;
import io.flexiq.internal.worker.WorkerStore;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A worker's store that counts what the worker asks of PostgreSQL, for a test to wait on a
 * positive signal rather than for a while: that the worker has looked for due jobs (and found
 * none) since a point in the test, or that its claimer has put back passed leases since then.
 * Build the worker with {@code builder.build(probe)}.
 */
final class WorkerProbe extends ForwardingStore {
    private final AtomicInteger claims = new AtomicInteger();
    private final AtomicInteger waits = new AtomicInteger();
    private final AtomicInteger rescues = new AtomicInteger();
    /** The generation the worker waits to move past, -1 while it does not wait. */
    private volatile long waitingOn = -1;

    WorkerProbe(WorkerStore next) {
        super(next);
    }

    /** A probe on the client's own store, as {@link Worker.Builder#build()} would use. */
    static WorkerProbe of(FlexiQ queue) {
        return new WorkerProbe(new NativeWorkerStore(queue.handle()));
    }

    @Override
    public int claim(String[] queues, String[] tasks, int limit, long leaseMillis, long token, ClaimBuffer out) {
        int got = super.claim(queues, tasks, limit, leaseMillis, token, out);
        claims.incrementAndGet();
        return got;
    }

    @Override
    public long awaitWork(long seen, long timeoutMillis) {
        // Noted before waiting: a wake-up sent from here on moves the generation past seen, so
        // the wait ends at once and is not lost.
        waitingOn = seen;
        waits.incrementAndGet();
        try {
            return super.awaitWork(seen, timeoutMillis);
        } finally {
            waitingOn = -1;
        }
    }

    @Override
    public List<NativeBridge.Rescued> rescueExpired() {
        List<NativeBridge.Rescued> rescued = super.rescueExpired();
        rescues.incrementAndGet();
        return rescued;
    }

    /** Claims answered so far. */
    int claims() {
        return claims.get();
    }

    /** Times so far the worker found nothing to claim and began waiting for a wake-up or its poll. */
    int waits() {
        return waits.get();
    }

    /** Passes so far that put back jobs whose lease had passed. */
    int rescues() {
        return rescues.get();
    }

    /**
     * Waits until the worker has looked for due jobs, found none, and waits for a wake-up, with
     * its client's listener connected: from here on, only an announcement (or another wake-up)
     * or the end of its poll interval makes it look again. The listener's connecting is itself a
     * wake-up (generation 1 at the least), so a worker still waiting on the generation it read
     * before that would look again without any announcement.
     */
    void awaitIdle() throws InterruptedException {
        WorkerTest.await("the worker to wait for work, its client listening", () -> {
            long on = waitingOn;
            return on > 0 && on == workGeneration();
        });
    }

    /** The client's wake-up generation now: what an idle worker waits to move. */
    long generation() {
        return workGeneration();
    }

    /**
     * Waits until the worker, woken after {@code generation}, has looked for due jobs again and
     * waits on a later generation.
     */
    void awaitWaitingPast(long generation) throws InterruptedException {
        WorkerTest.await("the worker to look again after wake-up " + generation, () -> waitingOn > generation);
    }

    /** Waits until the worker has begun waiting {@code n} more times than {@code since}, as below. */
    void awaitWaits(int since, int n) throws InterruptedException {
        WorkerTest.await(n + " more waits for work", () -> waits() >= since + n);
    }

    /**
     * Waits until the worker has claimed {@code n} more times than {@code since} claims: each of
     * those claims began after this call's caller took {@code since}, save the first, which may
     * have been under way.
     */
    void awaitClaims(int since, int n) throws InterruptedException {
        WorkerTest.await(n + " more claims", () -> claims() >= since + n);
    }

    /** Waits until the worker has made {@code n} more rescue passes than {@code since}, as above. */
    void awaitRescues(int since, int n) throws InterruptedException {
        WorkerTest.await(n + " more rescue passes", () -> rescues() >= since + n);
    }
}
