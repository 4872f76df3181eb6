package io.flexiq.internal.enqueue;

import io.flexiq.StorageException;
import io.flexiq.StorageUnavailableException;
import io.flexiq.TransactionRetryException;
import io.flexiq.internal.NativeBridge;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs an enqueue on the application's own connection, inside whatever transaction it is in.
 * The native core prepares the statement (keys, canonical payloads, digests, SQL text) and
 * resolves its rows; this class only binds and runs it with {@code java.sql}, so any PostgreSQL
 * driver and pool works. It never commits, rolls back or closes the connection.
 */
final class ConnectionEnqueue {
    private ConnectionEnqueue() {}

    static NativeBridge.Enqueued run(Connection connection, long client, NativeBridge.Enqueue call) {
        NativeBridge.EnqueueStatement statement = call.prepare(client);
        List<NativeBridge.EnqueueRow> rows;
        try {
            rows = execute(connection, statement);
        } catch (SQLException e) {
            NativeBridge.discard(statement);
            throw failure(e);
        } catch (RuntimeException | Error e) {
            NativeBridge.discard(statement);
            throw e;
        }
        return NativeBridge.resolve(statement, rows);
    }

    private static List<NativeBridge.EnqueueRow> execute(Connection connection, NativeBridge.EnqueueStatement statement)
            throws SQLException {
        List<NativeBridge.EnqueueRow> rows = new ArrayList<>();
        List<Array> arrays = new ArrayList<>(statement.params().size());
        try (PreparedStatement ps = connection.prepareStatement(statement.sql())) {
            int i = 1;
            for (NativeBridge.Parameter p : statement.params()) {
                Array array = connection.createArrayOf(p.elementType(), p.elements());
                arrays.add(array);
                ps.setArray(i++, array);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(new NativeBridge.EnqueueRow(rs.getLong(1), rs.getBoolean(2), rs.getString(3),
                            rs.getString(4)));
                }
            }
        } finally {
            for (Array array : arrays) {
                try {
                    array.free();
                } catch (SQLException ignored) {
                    // Freeing only releases driver memory early; the statement's outcome stands.
                }
            }
        }
        return rows;
    }

    /** The exception for a failed statement on the caller's connection, saying what to do. */
    static StorageException failure(SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        // The driver's first line is the server's message; the lines after it (detail, the
        // PL/pgSQL context) stay in the cause.
        String said = e.getMessage() == null ? "" : e.getMessage().lines().findFirst().orElse("");
        String where = "enqueue on the application's connection failed (SQLSTATE " + state + "): "
                + said + "; ";
        if (state.equals("40001") || state.equals("40P01")) {
            return new TransactionRetryException(where + "roll the transaction back and run it again", state, e);
        }
        if (state.equals("25P02")) {
            return new StorageException(where + "the transaction had already failed before this enqueue; roll it"
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
                    + " with FlexiQ.grantProducer(role)", e);
        }
        return new StorageException(where + "the transaction must be rolled back", e);
    }
}
