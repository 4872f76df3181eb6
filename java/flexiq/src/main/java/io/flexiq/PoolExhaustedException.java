package io.flexiq;

/**
 * Every connection of the client's pool stayed busy for the acquire timeout
 * ({@link FlexiQ.Builder#acquireTimeout}). PostgreSQL is up, but the client's statements are
 * slow or blocked (a lock held elsewhere, a long transaction), or the pool is too small for the
 * load. Nothing was written; the call may be repeated. The message names the pool's size, its
 * schema and the time waited.
 */
public class PoolExhaustedException extends StorageUnavailableException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message. */
    public PoolExhaustedException(String message) {
        super(message);
    }
}
