package io.flexiq.internal.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class PrefetchTest {
    private static long millis(long n) {
        return TimeUnit.MILLISECONDS.toNanos(n);
    }

    private static void handled(Prefetch p, int times, long nanos) {
        for (int i = 0; i < times; i++) {
            p.handled(nanos);
        }
    }

    @Test
    void aSetPrefetchNeverMoves() {
        Prefetch p = Prefetch.fixed(10, 3);
        assertEquals(3, p.now());
        handled(p, 100, 1_000);
        assertEquals(3, p.now());
        assertEquals(3, p.most());
    }

    @Test
    void unsetItStartsAtTheConcurrencyAndFollowsTheHandlersPaceBetweenItAndTheClaimBatch() {
        Prefetch p = Prefetch.adaptive(10, 100);
        assertEquals(10, p.now(), "before any handler returned");
        handled(p, 1, 20_000);
        assertEquals(100, p.now(), "quick handlers: at most the claim batch");
        handled(p, 200, millis(10));
        assertEquals(50, p.now(), "10 ms handlers, 10 threads: what they finish in 50 ms");
        handled(p, 200, millis(200));
        assertEquals(10, p.now(), "slow handlers: no fewer than the concurrency");
    }

    @Test
    void oneSlowJobLowersItUntilAFewDozenQuickOnesFollow() {
        Prefetch p = Prefetch.adaptive(10, 100);
        handled(p, 200, millis(10));
        p.handled(millis(1_000));
        assertEquals(10, p.now(), "the mean of how long handlers ran, a second among 10 ms");
        handled(p, 100, millis(10));
        int after = p.now();
        assertTrue(after >= 45 && after <= 50, "a hundred 10 ms jobs later: " + after);
    }

    @Test
    void aConcurrencyAboveTheClaimBatchBoundsIt() {
        Prefetch p = Prefetch.adaptive(300, 100);
        handled(p, 1, 1_000);
        assertEquals(300, p.now());
    }
}
