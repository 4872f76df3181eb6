package io.flexiq.test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/** JDBC and waiting helpers for the tests. */
final class Db {
    private Db() {}

    /** Runs a query returning one value, as text. */
    static String query(String jdbcUrl, String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl);
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getString(1);
        }
    }

    /** Runs statements. */
    static void execute(String jdbcUrl, String... sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl); Statement s = c.createStatement()) {
            for (String statement : sql) {
                s.execute(statement);
            }
        }
    }

    /** Whether a schema of that name exists in the database. */
    static boolean schemaExists(String jdbcUrl, String schema) throws SQLException {
        return "1".equals(query(jdbcUrl, "SELECT count(*) FROM pg_namespace WHERE nspname = '" + schema + "'"));
    }

    /** Whether the database accepts a connection at all. */
    static boolean reachable(String jdbcUrl) {
        try {
            query(jdbcUrl, "SELECT 1");
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    /** Waits until {@code condition} holds, failing after {@code limit}. */
    static void await(String what, Duration limit, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("gave up after " + limit + " waiting for " + what);
            }
            Thread.sleep(100);
        }
    }
}
