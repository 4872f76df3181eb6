package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.test.PostgresServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS through the real native library, against a private PostgreSQL serving a certificate for
 * {@code localhost} signed by a test CA ({@code tests/tls/make-certs.sh}).
 */
class TlsTest {
    @TempDir
    static Path certs;

    private static PostgresServer server;

    @BeforeAll
    static void start() throws Exception {
        Process make = new ProcessBuilder("sh", "tests/tls/make-certs.sh", certs.toString())
                .redirectErrorStream(true)
                .start();
        String output = new String(make.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, make.waitFor(), "make-certs.sh (needs openssl) printed: " + output);
        server = PostgresServer.builder().durable(false).tls(certs.resolve("server.crt"), certs.resolve("server.key")).start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** The server's URL through {@code host}, its sessions named {@code name}, with TLS settings. */
    private static String url(String host, String name, String tls) {
        return server.url().replace("@127.0.0.1:", "@" + host + ":") + "?application_name=" + name + "&" + tls;
    }

    private static String verifyFull(String root) {
        return "sslmode=verify-full&sslrootcert=" + certs.resolve(root);
    }

    /** How many of the sessions named {@code name} are and are not encrypted, as the server sees them. */
    private static long[] sessions(String name) throws Exception {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl() + "&sslmode=disable");
                PreparedStatement s = c.prepareStatement("SELECT count(*) FILTER (WHERE s.ssl), "
                        + "count(*) FILTER (WHERE NOT s.ssl) FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) "
                        + "WHERE a.application_name = ?")) {
            s.setString(1, name);
            try (ResultSet r = s.executeQuery()) {
                r.next();
                return new long[] {r.getLong(1), r.getLong(2)};
            }
        }
    }

    @Test
    void verifyFullWithTheRightRootAndHostEnqueuesOverTls() throws Exception {
        String schema = TestDatabase.freshSchema();
        try (FlexiQ queue = FlexiQ.builder(url("localhost", schema, verifyFull("ca.crt")))
                .schema(schema).migrate(true).build()) {
            String id = queue.enqueue(EnqueueTest.CHARGE, new EnqueueTest.Order(1, 100));
            assertEquals(JobState.AVAILABLE, queue.getJob(id).orElseThrow().state());
            long[] encryptedAndPlain = sessions(schema);
            assertTrue(encryptedAndPlain[0] > 0 && encryptedAndPlain[1] == 0,
                    "encrypted sessions " + encryptedAndPlain[0] + ", plain " + encryptedAndPlain[1]);
        }
    }

    @Test
    void aHostTheCertificateDoesNotNameIsUnavailableAndSaysWhy() {
        String schema = TestDatabase.freshSchema();
        StorageUnavailableException e = assertThrows(StorageUnavailableException.class,
                () -> FlexiQ.builder(url("127.0.0.1", schema, verifyFull("ca.crt"))).schema(schema).build());
        assertTrue(e.getMessage().contains(
                "TLS certificate verification failed for host 127.0.0.1: name not in certificate"), e.getMessage());
        assertTrue(e.getMessage().contains("check sslrootcert/sslmode"), e.getMessage());
    }

    @Test
    void aRootThatDidNotSignTheCertificateIsUnavailableAndSaysWhy() {
        String schema = TestDatabase.freshSchema();
        StorageUnavailableException e = assertThrows(StorageUnavailableException.class,
                () -> FlexiQ.builder(url("localhost", schema, verifyFull("other-ca.crt"))).schema(schema).build());
        assertTrue(e.getMessage().contains("certificate not signed by a CA in sslrootcert"), e.getMessage());
    }

    @Test
    void anUnreadableRootFileIsUnavailableAndNamed() {
        String schema = TestDatabase.freshSchema();
        StorageUnavailableException e = assertThrows(StorageUnavailableException.class,
                () -> FlexiQ.builder(url("localhost", schema, verifyFull("missing.crt"))).schema(schema).build());
        assertTrue(e.getMessage().contains("could not read sslrootcert " + certs.resolve("missing.crt")),
                e.getMessage());
    }
}
