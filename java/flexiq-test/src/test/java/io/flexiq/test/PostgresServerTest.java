package io.flexiq.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Starting, configuring, stopping and restarting throwaway servers (no extension involved). */
class PostgresServerTest {
    @Test
    void aFastServerKeepsItsDataAndPortAcrossShutDownAndRestartAndLeavesNothingAfterClose() throws Exception {
        Path directory;
        String jdbcUrl;
        try (PostgresServer pg = PostgresServer.builder().durable(false).start()) {
            directory = pg.directory();
            jdbcUrl = pg.jdbcUrl();
            assertEquals(!PostgresServer.runningAsRoot() && !MachineBinaries.chosen(System.getenv()), pg.embedded(),
                    "embedded binaries unless root or FLEXIQ_PG_BIN: " + pg);
            assertEquals("postgres://postgres@127.0.0.1:" + pg.port() + "/postgres", pg.url());
            assertEquals("off", Db.query(jdbcUrl, "SHOW fsync"));
            assertEquals("off", Db.query(jdbcUrl, "SHOW synchronous_commit"));
            Db.execute(jdbcUrl, "CREATE TABLE kept (v text)", "INSERT INTO kept VALUES ('before the outage')");

            int port = pg.port();
            pg.shutDown();
            assertFalse(Db.reachable(jdbcUrl), "no server after shutDown");
            pg.shutDown(); // already down: nothing to do

            pg.restart();
            assertEquals(port, pg.port());
            assertEquals("before the outage", Db.query(jdbcUrl, "SELECT v FROM kept"));
            assertTrue(Files.isDirectory(directory));
        }
        assertFalse(Files.exists(directory), directory + " deleted");
        assertFalse(Db.reachable(jdbcUrl), "no server after close");
    }

    @Test
    void aCrashedDurableServerRecoversItsCommitsAtRestart() throws Exception {
        try (PostgresServer pg = PostgresServer.start()) {
            String jdbcUrl = pg.jdbcUrl();
            Db.execute(jdbcUrl, "CREATE TABLE kept (v text)", "INSERT INTO kept VALUES ('committed')");
            pg.crash();
            assertFalse(Db.reachable(jdbcUrl), "no server after crash");
            pg.crash(); // already down: nothing to do
            pg.restart();
            assertEquals("committed", Db.query(jdbcUrl, "SELECT v FROM kept"));
            // An immediate shutdown leaves the next start to recover from the log.
            assertTrue(Files.readString(pg.logFile()).contains("not properly shut down"),
                    "recovered after an immediate shutdown: " + pg.logFile());
        }
    }

    @Test
    void aDurableServerRunsWithTheDefaultsAndTheSettingsGiven() throws Exception {
        String odd = "it's a \\ test";
        try (PostgresServer pg = PostgresServer.builder()
                .setting("work_mem", "5MB")
                .setting("Cluster_Name", odd)
                .setting("max_connections", "150")
                .start()) {
            Map<String, String> expected = Map.of("fsync", "on", "synchronous_commit", "on", "full_page_writes", "on",
                    "work_mem", "5MB", "cluster_name", odd, "max_connections", "150",
                    "listen_addresses", "127.0.0.1");
            for (Map.Entry<String, String> setting : expected.entrySet()) {
                assertEquals(setting.getValue(), Db.query(pg.jdbcUrl(), "SHOW " + setting.getKey()), setting.getKey());
            }
        }
        try (PostgresServer pg = PostgresServer.start()) {
            assertEquals("200", Db.query(pg.jdbcUrl(), "SHOW max_connections"));
        }
    }

    @Test
    void aServerThatCannotStartIsReportedWithItsLogAndRemoved() {
        PostgresServerException e = assertThrows(PostgresServerException.class,
                () -> PostgresServer.builder().setting("shared_buffers", "plenty").start());
        assertTrue(e.getMessage().contains("shared_buffers"), e.getMessage());
        Matcher log = Pattern.compile("tail of the server log (\\S+):").matcher(e.getMessage());
        assertTrue(log.find(), e.getMessage());
        assertFalse(Files.exists(Path.of(log.group(1)).getParent()), "directory of the failed server deleted");
    }

    @Test
    void settingsThatWouldBreakTheServerOrItsUrlAreRefusedBeforeStarting() {
        for (String[] bad : new String[][] {{"port", "5432"}, {"LISTEN_ADDRESSES", "*"},
                {"unix_socket_directories", "/tmp"}, {"work_mem = 1; x", "5MB"}, {"", "x"}, {"work_mem", "a\0b"}}) {
            assertThrows(IllegalArgumentException.class, () -> PostgresServer.builder().setting(bad[0], bad[1]),
                    bad[0]);
        }
    }

    @Test
    void theMachinesBinariesAreFoundWhereConfigured() {
        PostgresServerException e = assertThrows(PostgresServerException.class,
                () -> MachineBinaries.find(Map.of("FLEXIQ_PG_BIN", "/nonexistent/bin")));
        assertTrue(e.getMessage().contains("/nonexistent/bin (from FLEXIQ_PG_BIN)"), e.getMessage());
        assertTrue(java.util.Arrays.compare(MachineBinaries.version("10").orElseThrow(),
                MachineBinaries.version("9.6").orElseThrow()) > 0, "10 is newer than 9.6");
        assertTrue(MachineBinaries.version("main").isEmpty());
    }
}
