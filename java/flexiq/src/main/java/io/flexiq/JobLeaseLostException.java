package io.flexiq;

/**
 * A handler's attempt no longer holds its job, so what it asked to record in its transaction
 * (the job's completion, a checkpoint) was not: the attempt's lease passed and a later attempt
 * took the job, or the job was completed already. Roll the transaction back, so that the
 * handler's own writes in it are undone with it; the attempt that holds the job decides.
 */
public class JobLeaseLostException extends FlexiQException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message. */
    public JobLeaseLostException(String message) {
        super(message);
    }
}
