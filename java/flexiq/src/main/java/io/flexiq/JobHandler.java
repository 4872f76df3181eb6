package io.flexiq;

/**
 * Runs the jobs of one task. Delivery is at least once: a job whose worker died mid-attempt runs
 * again on another worker, so a handler whose effect must not repeat passes
 * {@link JobContext#jobId()} (or a domain id) to the system performing it as that system's own
 * idempotency key, and can skip completed stages with {@link JobContext#checkpoint}.
 *
 * <p>Returning completes the job; throwing fails the attempt, which is retried under the job's
 * retry policy until its attempts are spent, and then dead-lettered with the exception's message.
 *
 * @param <T> the task's payload type
 */
@FunctionalInterface
public interface JobHandler<T> {
    /** Runs one attempt of a job. */
    void handle(T payload, JobContext context) throws Exception;
}
