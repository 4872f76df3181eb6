package io.flexiq;

import java.util.List;

/**
 * Where application code enqueues jobs. {@link FlexiQ} is the real queue, on PostgreSQL;
 * {@link TestQueue} runs handlers at once, without storage, for unit tests. Code written against
 * this interface runs on either.
 */
public interface JobQueue {
    /**
     * Enqueues a job; returns its id and what happened to it.
     *
     * @throws IllegalArgumentException if the task is null, or a value is out of range (see
     *     docs/limits-and-errors.md)
     * @throws NullPointerException if the options are null
     * @throws IdempotencyConflictException if the key is bound to a different request
     * @throws StorageUnavailableException if PostgreSQL cannot be reached in time
     */
    <T> EnqueueResult enqueueWithResult(Task<T> task, T payload, EnqueueOptions options);

    /**
     * Enqueues one job per payload, all with the same options, as one batch; returns the ids in
     * input order. Entries whose keys repeat, within the batch or against active jobs, resolve to
     * the job holding the key. A conflict in any entry fails the whole batch; nothing is written.
     */
    <T> List<String> enqueueMany(Task<T> task, List<? extends T> payloads, EnqueueOptions options);

    /** Enqueues a batch of entries, each with its own task and options; results in input order. */
    List<EnqueueResult> enqueueManyWithResults(List<? extends EnqueueRequest<?>> requests);

    /** Enqueues a job with default options; returns its id (or the id of the job holding its key). */
    default <T> String enqueue(Task<T> task, T payload) {
        return enqueueWithResult(task, payload, EnqueueOptions.defaults()).jobId();
    }

    /** Enqueues a job; returns its id, or the id of the job already holding its key. */
    default <T> String enqueue(Task<T> task, T payload, EnqueueOptions options) {
        return enqueueWithResult(task, payload, options).jobId();
    }

    /** Enqueues a job with default options; returns its id and what happened to it. */
    default <T> EnqueueResult enqueueWithResult(Task<T> task, T payload) {
        return enqueueWithResult(task, payload, EnqueueOptions.defaults());
    }

    /** Enqueues a batch of entries, each with its own task and options; ids in input order. */
    default List<String> enqueueMany(List<? extends EnqueueRequest<?>> requests) {
        return EnqueueResult.ids(enqueueManyWithResults(requests));
    }
}
