package io.flexiq.internal.worker;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How many claimed jobs may wait for a worker's handler threads. Set by the user, it is fixed.
 * Left unset, it follows the handlers' pace: as many jobs as the handlers finish in about
 * {@link #HORIZON_NANOS}, at least the concurrency and at most the claim batch (or the
 * concurrency, if larger). Quick handlers then get large claims, which drain a backlog at a
 * fraction of the round trips, while jobs that take long wait in no worker's memory longer than
 * they would with a prefetch of the concurrency. A worker starts at the least and moves as its
 * handlers return.
 */
final class Prefetch {
    /** How long a prefetched job should wait for a handler thread, at most, at the handlers' pace. */
    static final long HORIZON_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** How much each handler's time moves the mean: one sixteenth, so a few odd jobs move it little. */
    private static final int WEIGHT_SHIFT = 4;
    private static final long UNKNOWN = -1;

    private final int concurrency;
    private final int least;
    private final int most;
    /** A moving mean of how long handlers ran, in nanoseconds; {@link #UNKNOWN} until one returned. */
    private final AtomicLong meanNanos = new AtomicLong(UNKNOWN);

    private Prefetch(int concurrency, int least, int most) {
        this.concurrency = concurrency;
        this.least = least;
        this.most = most;
    }

    /** Always {@code prefetch}. */
    static Prefetch fixed(int concurrency, int prefetch) {
        return new Prefetch(concurrency, prefetch, prefetch);
    }

    /** Following the handlers' pace, for a worker of {@code concurrency} claiming up to {@code claimBatch}. */
    static Prefetch adaptive(int concurrency, int claimBatch) {
        return new Prefetch(concurrency, concurrency, Math.max(concurrency, claimBatch));
    }

    /** The most it can be. */
    int most() {
        return most;
    }

    /** A handler ran for {@code nanos}. */
    void handled(long nanos) {
        if (least == most) {
            return;
        }
        meanNanos.accumulateAndGet(Math.max(nanos, 0),
                (mean, x) -> mean == UNKNOWN ? x : mean + ((x - mean) >> WEIGHT_SHIFT));
    }

    /** How many claimed jobs may wait now. */
    int now() {
        long mean = meanNanos.get();
        if (least == most || mean == UNKNOWN) {
            return least;
        }
        // Jobs the handlers finish within the horizon, all threads together.
        long finished = concurrency * HORIZON_NANOS / Math.max(mean, 1);
        return (int) Math.max(least, Math.min(most, finished));
    }

    @Override
    public String toString() {
        return least == most ? Integer.toString(least) : least + " to " + most + " by the handlers' pace";
    }
}
