package io.flexiq.internal.worker;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;

/**
 * The attempts whose lease a worker keeps: claimed, and not yet recorded, given back or lost.
 * Each holds one of the worker's slots until its handler thread is done with it, and a place
 * among the unrecorded attempts until it leaves this set. There are a few claims' worth more
 * places than slots, so claims go out while earlier ones' completions commit; and claims never
 * run further ahead of the outcomes being recorded: a worker whose completions are slow claims
 * no more than it can finish.
 */
final class HeldAttempts {
    private final Set<HeldAttempt> held = ConcurrentHashMap.newKeySet();
    private final Semaphore slots;
    private final Semaphore unrecorded;

    HeldAttempts(Semaphore slots, Semaphore unrecorded) {
        this.slots = slots;
        this.unrecorded = unrecorded;
    }

    void add(HeldAttempt a) {
        held.add(a);
    }

    /** Those held now. */
    List<HeldAttempt> snapshot() {
        return new ArrayList<>(held);
    }

    /** Lets {@code a} go (its outcome recorded, dropped, given back or its lease lost); true if it was held. */
    boolean remove(HeldAttempt a) {
        if (!held.remove(a)) {
            return false;
        }
        unrecorded.release();
        return true;
    }

    void removeAll(Collection<HeldAttempt> attempts) {
        attempts.forEach(this::remove);
    }

    /** The handler thread is done with {@code a}, or will never run it. */
    void handlerDone(HeldAttempt a) {
        if (a.handlerDone()) {
            slots.release();
        }
    }
}
