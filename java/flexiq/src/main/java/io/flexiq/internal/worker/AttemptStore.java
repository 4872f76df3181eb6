package io.flexiq.internal.worker;

import java.sql.Connection;

/**
 * What a {@code JobContext} records of its attempt: checkpoints, through FlexiQ's own
 * connections or on a connection of the application's, and the job's completion in the
 * application's transaction. The last two only run the statements: the application commits.
 */
public interface AttemptStore {
    /** The value stored under {@code name}, or null. */
    byte[] load(String name);

    /** Stores a value; false when the attempt no longer holds its job. */
    boolean save(String name, byte[] value);

    /** Stores a value on {@code connection}, in its transaction; false when the attempt no longer holds its job. */
    boolean saveIn(Connection connection, String name, byte[] value);

    /** The job is to be completed in a transaction of the handler's, not as the handler returns. */
    void completesInTransaction();

    /** Completes the job on {@code connection}, in its transaction; false when the attempt no longer holds its job. */
    boolean completeIn(Connection connection);
}
