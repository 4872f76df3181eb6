package io.flexiq;

/**
 * PostgreSQL could not be used for now: it could not be reached within the client's connect
 * timeout, not over TLS as the URL's {@code sslmode} demands, it refused new connections (too
 * many clients), or, as {@link PoolExhaustedException}, none of the client's connections came
 * free in time; the message says which. Nothing was written; the call may be repeated later (a
 * keyed enqueue then resolves as usual).
 */
public class StorageUnavailableException extends StorageException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message. */
    public StorageUnavailableException(String message) {
        super(message);
    }

    /** Creates an exception with a message and the failure that caused it. */
    public StorageUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
