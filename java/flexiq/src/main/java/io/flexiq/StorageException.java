package io.flexiq;

/** PostgreSQL refused or failed a statement. A failed enqueue wrote nothing. */
public class StorageException extends FlexiQException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message. */
    public StorageException(String message) {
        super(message);
    }

    /** Creates an exception with a message and the failure that caused it. */
    public StorageException(String message, Throwable cause) {
        super(message, cause);
    }
}
