package io.flexiq.internal;

import io.flexiq.StorageException;
import io.flexiq.StorageUnavailableException;
import io.flexiq.TransactionRetryException;
import java.sql.SQLException;

/**
 * The exceptions for FlexiQ's statements that fail on a connection of the application's (an
 * enqueue, or a handler completing its job, in the application's transaction), each saying what
 * to do.
 */
public final class ApplicationConnections {
    private ApplicationConnections() {}

    /**
     * The exception for {@code e}, thrown by {@code what} (for example "enqueue"); {@code grant}
     * names the call that grants a role what the statement needs.
     */
    public static StorageException failure(SQLException e, String what, String grant) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        // The driver's first line is the server's message; the lines after it (detail, the
        // PL/pgSQL context) stay in the cause.
        String said = e.getMessage() == null ? "" : e.getMessage().lines().findFirst().orElse("");
        String where = what + " on the application's connection failed (SQLSTATE " + state + "): " + said + "; ";
        if (state.equals("40001") || state.equals("40P01")) {
            return new TransactionRetryException(where + "roll the transaction back and run it again", state, e);
        }
        if (state.equals("25P02")) {
            return new StorageException(where + "the transaction had already failed before this call; roll it"
                    + " back, then retry", e);
        }
        if (state.startsWith("08")) {
            return new StorageUnavailableException(where + "the connection to PostgreSQL is broken; get another"
                    + " connection and retry the transaction", e);
        }
        if (state.equals("42P01") || state.equals("42883") || state.equals("3F000")) {
            return new StorageException(where + "is the schema migrated (FlexiQ.migrate()), and is the connection's"
                    + " database the client's?", e);
        }
        if (state.equals("42501")) {
            return new StorageException(where + "the connection's role lacks privileges on the schema; grant them"
                    + " with " + grant, e);
        }
        return new StorageException(where + "the transaction must be rolled back", e);
    }
}
