package io.flexiq;

/**
 * PostgreSQL could not be reached within the client's connect timeout, or not over TLS as the
 * URL's {@code sslmode} demands (the message says why). Nothing was written; the call may be
 * repeated once the database is back (a keyed enqueue then resolves as usual).
 */
public class StorageUnavailableException extends StorageException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message. */
    public StorageUnavailableException(String message) {
        super(message);
    }
}
