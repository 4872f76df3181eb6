package io.flexiq.internal.worker;

import java.util.concurrent.Semaphore;

/**
 * A worker's places for claimed jobs not yet done with by a handler thread: its concurrency plus
 * its prefetch, whose number the claiming thread changes as the prefetch moves. Made fewer while
 * jobs hold them, the free places go below zero and come back as handlers finish.
 */
final class Slots extends Semaphore {
    private static final long serialVersionUID = 1L;
    /** How many there are; changed by the claiming thread only. */
    private int total;

    Slots(int total) {
        super(total);
        this.total = total;
    }

    int total() {
        return total;
    }

    /** Makes them {@code n}. */
    void resize(int n) {
        if (n > total) {
            release(n - total);
        } else if (n < total) {
            reducePermits(total - n);
        }
        total = n;
    }
}
