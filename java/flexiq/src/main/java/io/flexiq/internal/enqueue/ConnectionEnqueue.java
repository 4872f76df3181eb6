package io.flexiq.internal.enqueue;

import io.flexiq.internal.ApplicationConnections;
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
            throw ApplicationConnections.failure(e, "enqueue", "FlexiQ.grantProducer(role)");
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
}
