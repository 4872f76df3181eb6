package io.flexiq;

/** What PostgreSQL decided for one enqueue. */
public enum EnqueueOutcome {
    /** A new job was created. */
    ACCEPTED,
    /** The key was bound to an equivalent request: its job's id is returned and nothing written. */
    REPLAYED,
    /** Debounce: the pending job holding the key was replaced by this request. */
    REPLACED,
    /** Debounce: the job holding the key could not be replaced; see {@link EnqueueResult#reason()}. */
    NON_REPLACEABLE,
    /** Throttle: the request was folded into the job already holding the key. */
    COALESCED
}
