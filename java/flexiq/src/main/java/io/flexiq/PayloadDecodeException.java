package io.flexiq;

/**
 * A stored payload that its codec cannot decode: encrypted under a key the codec does not hold,
 * altered since it was stored, or stored for another task. The attempt of a job whose payload
 * cannot be decoded fails with this exception (its handler never runs), and the job is
 * dead-lettered once its attempts are spent.
 */
public class PayloadDecodeException extends FlexiQException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message. */
    public PayloadDecodeException(String message) {
        super(message);
    }

    /** Creates an exception with a message and the failure that caused it. */
    public PayloadDecodeException(String message, Throwable cause) {
        super(message, cause);
    }
}
