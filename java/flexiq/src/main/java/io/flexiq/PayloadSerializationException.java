package io.flexiq;

/** A payload could not be turned into the bytes FlexiQ stores and hashes. Nothing was written. */
public class PayloadSerializationException extends FlexiQException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message. */
    public PayloadSerializationException(String message) {
        super(message);
    }

    /** Creates an exception with a message and the serializer's own failure. */
    public PayloadSerializationException(String message, Throwable cause) {
        super(message, cause);
    }
}
