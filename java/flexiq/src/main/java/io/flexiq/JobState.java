package io.flexiq;

/** Where a job is in its life. A job holds its key while it is pending or running. */
public enum JobState {
    /** Pending: due now, waiting for a worker. */
    AVAILABLE,
    /** Pending: due at a later time. */
    SCHEDULED,
    /** Pending: failed, waiting for its next attempt. */
    RETRYABLE,
    /** A worker holds it under a lease. */
    RUNNING,
    /** Finished successfully. */
    COMPLETED,
    /** Spent its attempt budget; kept as a dead letter. */
    DEAD,
    /** Cancelled before it ran. */
    CANCELLED;

    /** Whether the job is pending or running, and so holds its key. */
    public boolean isActive() {
        return this == AVAILABLE || this == SCHEDULED || this == RETRYABLE || this == RUNNING;
    }
}
