package io.flexiq;

/**
 * An enqueue on the application's connection met a concurrent transaction that PostgreSQL could
 * not order it with, and the application's transaction must be rolled back and run again:
 * a serialization failure (SQLSTATE {@code 40001}: under {@code REPEATABLE READ} or
 * {@code SERIALIZABLE}, another transaction committed a job holding the same key after this one
 * took its snapshot, so this transaction can neither see that job nor add a second one) or a
 * deadlock ({@code 40P01}). Nothing of the transaction will commit. Retrying the whole
 * transaction then finds the other job and gets it back as {@link EnqueueOutcome#REPLAYED}.
 * The driver's {@link java.sql.SQLException} is the cause.
 */
public class TransactionRetryException extends StorageException {
    private static final long serialVersionUID = 1L;

    private final String sqlState;

    /** Creates an exception with a message, the SQLSTATE and the driver's exception. */
    public TransactionRetryException(String message, String sqlState, Throwable cause) {
        super(message, cause);
        this.sqlState = sqlState;
    }

    /** PostgreSQL's SQLSTATE: {@code 40001} or {@code 40P01}. */
    public String sqlState() {
        return sqlState;
    }
}
