package io.flexiq.test;

/**
 * A throwaway PostgreSQL could not be started, stopped or restarted. The message names the
 * command or step that failed and quotes what it and the server's log said.
 */
public class PostgresServerException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message. */
    public PostgresServerException(String message) {
        super(message);
    }

    /** Creates an exception with a message and the failure behind it. */
    public PostgresServerException(String message, Throwable cause) {
        super(message, cause);
    }
}
