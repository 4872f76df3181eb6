package io.flexiq;

/** Why a debounced enqueue could not replace the job holding its key ({@link EnqueueOutcome#NON_REPLACEABLE}). */
public enum NonReplaceableReason {
    /** The key is held by a job enqueued without debounce (an idempotency or unique key, or a throttle). */
    INCOMPATIBLE_MODE,
    /** The job holding the key has started, or has run once and waits for a retry. */
    NOT_PENDING,
    /** The debounce's {@code maxWait} has passed since the job was first accepted: it is due now. */
    WINDOW_ELAPSED
}
