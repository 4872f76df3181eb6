package io.flexiq.test;

import io.flexiq.FlexiQ;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

/** One test class's schema and the migrated client on it; {@link #drop()} removes both. */
final class ClassSchema {
    /** Tells this JVM's schemas from those of other JVMs sharing a database. */
    private static final String JVM_TAG = String.format("%08x", new SecureRandom().nextInt());
    private static final AtomicInteger NEXT = new AtomicInteger();

    private final FlexiQ client;
    private final JdbcTarget jdbc;

    private ClassSchema(FlexiQ client, JdbcTarget jdbc) {
        this.client = client;
        this.jdbc = jdbc;
    }

    /** Creates a fresh schema in the database at {@code url} and migrates a client onto it. */
    static ClassSchema create(String url, JdbcTarget jdbc) {
        String schema = freshName();
        return new ClassSchema(FlexiQ.builder(url).schema(schema).migrate(true).build(), jdbc);
    }

    /** A schema name no other test class of this JVM, or of another JVM sharing the database, uses. */
    static String freshName() {
        return "flexiq_test_" + JVM_TAG + "_" + NEXT.incrementAndGet();
    }

    /**
     * Drops a schema with everything in it, if it exists.
     *
     * @throws SQLException if it could not be dropped
     */
    static void drop(JdbcTarget jdbc, String schema) throws SQLException {
        try (Connection connection = jdbc.connect(); Statement statement = connection.createStatement()) {
            statement.execute("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
        } catch (SQLException e) {
            throw new SQLException("could not drop the test schema " + schema + " at " + jdbc.url() + ": "
                    + e.getMessage(), e.getSQLState(), e);
        }
    }

    FlexiQ client() {
        return client;
    }

    /**
     * Closes the client (and so its workers) and drops its schema with everything in it.
     *
     * @throws SQLException if the schema could not be dropped
     */
    void drop() throws SQLException {
        client.close();
        drop(jdbc, client.schema());
    }
}
