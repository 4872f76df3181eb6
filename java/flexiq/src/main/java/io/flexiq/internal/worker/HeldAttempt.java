package io.flexiq.internal.worker;

import io.flexiq.JobEvent;
import io.flexiq.internal.ApiAccess;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One claimed attempt of a job, from its claim until its outcome is recorded, it is given back,
 * or its lease is found lost. Its outcome is decided once ({@link #settle()}): by the handler
 * returning or throwing, by its timeout, by a lost lease, or by shutdown; whoever settles it
 * says what is recorded, and everyone else leaves it alone.
 */
final class HeldAttempt {
    private static final ApiAccess API = ApiAccess.get();
    /** The timeout of a job without one. */
    static final long NO_TIMEOUT = Long.MIN_VALUE;

    final long id;
    final int attempt;
    final int maxAttempts;
    final long timeoutMillis;
    final String queue;
    final TaskHandler<?> handler;
    /** As stored: encoded by the codec {@link #payloadCodec} names, if not null. */
    final byte[] payload;
    final String payloadCodec;
    /** Microseconds from the job's due time to its claim, by PostgreSQL's clock. */
    final long waitedMicros;
    /** The trace context the job was enqueued in (a JSON object of carrier entries), or null. */
    final String traceContext;
    /** When the claim's answer arrived, by {@link System#nanoTime()}. */
    final long claimedNanos = System.nanoTime();
    private final AtomicBoolean settled = new AtomicBoolean();
    /** Whether its handler thread is done with it, or will never run it. */
    private final AtomicBoolean handlerDone = new AtomicBoolean();
    /** Whether its handler completes the job in a transaction of its own (see {@code JobContext.completeIn}). */
    private volatile boolean completesInTransaction;
    /** Whether that transaction has run the completion, which locks the job's row until it ends. */
    private volatile boolean completionRunInTransaction;
    /** The handler thread while the handler runs; guarded by this. */
    private Thread runner;
    /** When its handler started and returned, by {@link System#nanoTime()}; 0 until then. Guarded by this. */
    private long startNanos;
    private long endNanos;

    HeldAttempt(long id, int attempt, int maxAttempts, long timeoutMillis, String queue, TaskHandler<?> handler,
            byte[] payload, String payloadCodec, long waitedMicros, String traceContext) {
        this.id = id;
        this.attempt = attempt;
        this.maxAttempts = maxAttempts;
        this.timeoutMillis = timeoutMillis;
        this.queue = queue;
        this.handler = handler;
        this.payload = payload;
        this.payloadCodec = payloadCodec;
        this.waitedMicros = waitedMicros;
        this.traceContext = traceContext;
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

    /**
     * Its handler completes the job in a transaction of the application's: whether it did is
     * read once the handler returns, rather than the job completed then.
     */
    void completesInTransaction() {
        completesInTransaction = true;
    }

    boolean isCompletedInTransaction() {
        return completesInTransaction;
    }

    /** That transaction runs the completion: the job's row is locked there until it ends. */
    void completionRunsInTransaction() {
        completesInTransaction = true;
        completionRunInTransaction = true;
    }

    boolean isCompletionRunInTransaction() {
        return completionRunInTransaction;
    }

    /** Its handler starts on {@code thread}; returns how long the job waited from its due time. */
    synchronized Duration startRunning(Thread thread) {
        runner = thread;
        startNanos = System.nanoTime();
        return Duration.ofNanos(waitedMicros * 1_000 + (startNanos - claimedNanos));
    }

    /**
     * Ends the running phase, and returns how long it took in nanoseconds; after this,
     * {@link #interruptIfRunning()} no longer reaches the thread, which may already run another job.
     */
    synchronized long stopRunning() {
        runner = null;
        endNanos = System.nanoTime();
        return endNanos - startNanos;
    }

    /** How long its handler ran, or null if it never started or still runs. */
    synchronized Duration handlerDuration() {
        return endNanos == 0 ? null : Duration.ofNanos(endNanos - startNanos);
    }

    synchronized void interruptIfRunning() {
        if (runner != null) {
            runner.interrupt();
        }
    }

    /** The event of its handler's start, {@code startLatency} after the job was due. */
    JobEvent startedEvent(Duration startLatency) {
        return API.jobEvent(JobEvent.Kind.STARTED, Long.toString(id), handler.task().name(), queue, attempt,
                maxAttempts, null, null, null, startLatency);
    }

    /** The event of its completion. */
    JobEvent completedEvent() {
        return API.jobEvent(JobEvent.Kind.COMPLETED, Long.toString(id), handler.task().name(), queue, attempt,
                maxAttempts, null, null, handlerDuration(), null);
    }

    /** The event of its outcome's being recorded after a rescue had moved its job. */
    JobEvent recordedLateEvent() {
        return API.jobEvent(JobEvent.Kind.RECORDED_LATE, Long.toString(id), handler.task().name(), queue, attempt,
                maxAttempts, null, null, handlerDuration(), null);
    }

    /** The event of its being given back unfinished by a worker that closed. */
    JobEvent givenBackEvent() {
        return API.jobEvent(JobEvent.Kind.GIVEN_BACK, Long.toString(id), handler.task().name(), queue, attempt,
                maxAttempts, null, null, null, null);
    }

    /** The event of its failure: retried after {@code retryDelay}, or dead-lettered when it is null. */
    JobEvent failedEvent(String error, Duration retryDelay) {
        return API.jobEvent(retryDelay == null ? JobEvent.Kind.DEAD_LETTERED : JobEvent.Kind.RETRIED,
                Long.toString(id), handler.task().name(), queue, attempt, maxAttempts, error, retryDelay,
                handlerDuration(), null);
    }

    @Override
    public String toString() {
        return "attempt " + attempt + " of job " + id;
    }

    /** A job as the worker's log lines name it. */
    static String describe(long id, String task, String queue) {
        return "job " + id + " (task " + task + ", queue " + queue + ")";
    }

    static long[] ids(Collection<HeldAttempt> attempts) {
        return attempts.stream().mapToLong(a -> a.id).toArray();
    }

    static int[] attempts(Collection<HeldAttempt> attempts) {
        return attempts.stream().mapToInt(a -> a.attempt).toArray();
    }
}
