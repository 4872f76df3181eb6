package io.flexiq;

/**
 * Base class of every failure FlexiQ reports. Bad arguments are reported as
 * {@link IllegalArgumentException} instead, and calls on a closed client as
 * {@link IllegalStateException}.
 */
public class FlexiQException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message. */
    public FlexiQException(String message) {
        super(message);
    }

    /** Creates an exception with a message and the failure that caused it. */
    public FlexiQException(String message, Throwable cause) {
        super(message, cause);
    }
}
