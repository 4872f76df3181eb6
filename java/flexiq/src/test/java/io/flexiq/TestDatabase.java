package io.flexiq;

import io.flexiq.test.PostgresServer;
import java.util.concurrent.atomic.AtomicInteger;

/** One private PostgreSQL for the whole test JVM, and a fresh schema per client. */
final class TestDatabase {
    private static final AtomicInteger NEXT_SCHEMA = new AtomicInteger();
    private static PostgresServer server;

    private TestDatabase() {}

    /** The server, started on first use; its watchdog removes it when the JVM exits. */
    static synchronized String url() {
        if (server == null) {
            server = PostgresServer.builder().durable(false).start();
        }
        return server.url();
    }

    /** The server's log file. */
    static java.nio.file.Path serverLog() {
        url();
        return server.logFile();
    }

    /** A schema name no other test uses. */
    static String freshSchema() {
        return "j" + ProcessHandle.current().pid() + "_" + NEXT_SCHEMA.incrementAndGet();
    }

    /** The server as a JDBC URL. */
    static String jdbcUrl() {
        return url().replaceFirst("^postgres://postgres@", "jdbc:postgresql://") + "?user=postgres";
    }

    /** The server's URL for another role; the server trusts local connections, so no password. */
    static String url(String role) {
        return url().replaceFirst("^postgres://postgres@", "postgres://" + role + "@");
    }

    /** A JDBC connection to the server as {@code role}. */
    static java.sql.Connection jdbc(String role) throws java.sql.SQLException {
        String jdbc = url().replaceFirst("^postgres://postgres@", "jdbc:postgresql://") + "?user="
                + java.net.URLEncoder.encode(role, java.nio.charset.StandardCharsets.UTF_8);
        return java.sql.DriverManager.getConnection(jdbc);
    }

    /** Runs statements as the superuser, over JDBC. */
    static void execute(String... statements) throws java.sql.SQLException {
        try (java.sql.Connection c = jdbc("postgres"); java.sql.Statement s = c.createStatement()) {
            for (String statement : statements) {
                s.execute(statement);
            }
        }
    }

    /** Runs a query returning one number, over JDBC. */
    static long scalar(String sql) throws java.sql.SQLException {
        try (java.sql.Connection c = jdbc("postgres");
                java.sql.Statement s = c.createStatement();
                java.sql.ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getLong(1);
        }
    }

    /** A client on a fresh, migrated schema. */
    static FlexiQ client() {
        return FlexiQ.builder(url()).schema(freshSchema()).poolSize(8).migrate(true).build();
    }
}
