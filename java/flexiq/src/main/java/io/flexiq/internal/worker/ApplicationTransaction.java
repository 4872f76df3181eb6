package io.flexiq.internal.worker;

import io.flexiq.internal.ApplicationConnections;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Runs an attempt's statements on a connection of the application's, inside its transaction,
 * so that they commit with the handler's own writes or not at all. The statements are the
 * worker's own ({@link WorkerStore#transactionStatements()}): the job is recorded there as the
 * worker would record it. Never commits, rolls back or closes the connection.
 */
final class ApplicationTransaction {
    /** What a role needs to run these statements. */
    private static final String GRANT = "FlexiQ.grantWorker(role)";

    private ApplicationTransaction() {}

    /** Completes attempt {@code attempt} of job {@code id}; false when the attempt no longer holds the job. */
    static boolean complete(Connection connection, String sql, long id, int attempt) {
        String what = "completing attempt " + attempt + " of job " + id;
        requireTransaction(connection, what);
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            Array ids = connection.createArrayOf("int8", new Object[] {id});
            Array attempts = connection.createArrayOf("int4", new Object[] {attempt});
            ps.setArray(1, ids);
            ps.setArray(2, attempts);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        } catch (SQLException e) {
            throw ApplicationConnections.failure(e, what, GRANT);
        }
    }

    /** Stores checkpoint {@code name} of job {@code id}; false when attempt {@code attempt} no longer holds the job. */
    static boolean saveCheckpoint(Connection connection, String sql, long id, int attempt, String name, byte[] value) {
        String what = "storing checkpoint " + name + " of attempt " + attempt + " of job " + id;
        requireTransaction(connection, what);
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            ps.setLong(1, id);
            ps.setInt(2, attempt);
            ps.setString(3, name);
            ps.setBytes(4, value);
            return ps.executeUpdate() == 1;
        } catch (SQLException e) {
            throw ApplicationConnections.failure(e, what, GRANT);
        }
    }

    /** Refuses a connection in auto-commit, where the statement would commit alone, apart from the handler's writes. */
    private static void requireTransaction(Connection connection, String what) {
        boolean autoCommit;
        try {
            autoCommit = connection.getAutoCommit();
        } catch (SQLException e) {
            throw ApplicationConnections.failure(e, what, GRANT);
        }
        if (autoCommit) {
            throw new IllegalStateException(what + " needs the connection in a transaction, with auto-commit off:"
                    + " in auto-commit it would commit alone, apart from the handler's writes; call"
                    + " connection.setAutoCommit(false) first, or run the handler in a Spring transaction");
        }
    }
}
