package io.flexiq;

import java.util.Collection;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One claimed attempt of a job, from its claim until its outcome is recorded, it is given back,
 * or its lease is found lost. Its outcome is decided once ({@link #settle()}): by the handler
 * returning or throwing, by its timeout, by a lost lease, or by shutdown; whoever settles it
 * says what is recorded, and everyone else leaves it alone.
 */
final class HeldAttempt {
    /** The timeout of a job without one. */
    static final long NO_TIMEOUT = Long.MIN_VALUE;

    final long id;
    final int attempt;
    final int maxAttempts;
    final long timeoutMillis;
    final String queue;
    final TaskHandler<?> handler;
    final byte[] payload;
    private final AtomicBoolean settled = new AtomicBoolean();
    /** Whether its handler thread is done with it, or will never run it. */
    private final AtomicBoolean handlerDone = new AtomicBoolean();
    /** The handler thread while the handler runs; guarded by this. */
    private Thread runner;

    HeldAttempt(long id, int attempt, int maxAttempts, long timeoutMillis, String queue, TaskHandler<?> handler,
            byte[] payload) {
        this.id = id;
        this.attempt = attempt;
        this.maxAttempts = maxAttempts;
        this.timeoutMillis = timeoutMillis;
        this.queue = queue;
        this.handler = handler;
        this.payload = payload;
    }

    /** Decides this attempt's outcome; true for the one caller that gets to. */
    boolean settle() {
        return settled.compareAndSet(false, true);
    }

    /** Marks its handler thread done with it; true the first time. */
    boolean handlerDone() {
        return handlerDone.compareAndSet(false, true);
    }

    boolean settled() {
        return settled.get();
    }

    synchronized void startRunning(Thread thread) {
        runner = thread;
    }

    /**
     * Ends the running phase; after this, {@link #interruptIfRunning()} no longer reaches the
     * thread, which may already run another job.
     */
    synchronized void stopRunning() {
        runner = null;
    }

    synchronized void interruptIfRunning() {
        if (runner != null) {
            runner.interrupt();
        }
    }

    @Override
    public String toString() {
        return "attempt " + attempt + " of job " + id;
    }

    static long[] ids(Collection<HeldAttempt> attempts) {
        return attempts.stream().mapToLong(a -> a.id).toArray();
    }

    static int[] attempts(Collection<HeldAttempt> attempts) {
        return attempts.stream().mapToInt(a -> a.attempt).toArray();
    }
}
