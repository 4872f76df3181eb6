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
        String schema = "flexiq_test_" + JVM_TAG + "_" + NEXT.incrementAndGet();
        return new ClassSchema(FlexiQ.builder(url).schema(schema).migrate(true).build(), jdbc);
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
        try (Connection connection = jdbc.connect(); Statement statement = connection.createStatement()) {
            statement.execute("DROP SCHEMA IF EXISTS \"" + client.schema() + "\" CASCADE");
        } catch (SQLException e) {
            throw new SQLException("could not drop the test schema " + client.schema() + " at " + jdbc.url() + ": "
                    + e.getMessage(), e.getSQLState(), e);
        }
    }
}
