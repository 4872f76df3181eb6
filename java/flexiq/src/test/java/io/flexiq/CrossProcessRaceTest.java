package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Two JVMs, 16 threads each, racing over the same 100 keys: exactly 100 jobs, every id right. */
class CrossProcessRaceTest {
    @Test
    void racingProcessesMakeExactlyOneJobPerKey() throws Exception {
        String url = TestDatabase.url();
        String schema = TestDatabase.freshSchema();
        // Migrated up front so that the racers race on enqueue alone.
        FlexiQ.builder(url).schema(schema).migrate(true).build().close();
        long startAt = System.currentTimeMillis() + 4_000;
        List<Process> children = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            children.add(new ProcessBuilder(
                    Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xcheck:jni", "-cp", System.getProperty("java.class.path"),
                    RaceChild.class.getName(), url, schema, Long.toString(startAt))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start());
        }
        Map<String, String> idByKey = new HashMap<>();
        int calls = 0;
        for (Process child : children) {
            String out = read(child);
            assertEquals(true, child.waitFor(120, TimeUnit.SECONDS), "child finished");
            assertEquals(0, child.exitValue(), "child exit code");
            for (String line : out.split("\n")) {
                String[] parts = line.split(" ");
                String previous = idByKey.putIfAbsent(parts[0], parts[1]);
                if (previous != null) {
                    assertEquals(previous, parts[1], "two ids for " + parts[0]);
                }
                calls++;
            }
        }
        assertEquals(2 * RaceChild.THREADS * RaceChild.KEYS, calls);
        assertEquals(RaceChild.KEYS, idByKey.size());

        String jdbc = url.replaceFirst("^postgres://postgres@", "jdbc:postgresql://") + "?user=postgres";
        try (Connection c = DriverManager.getConnection(jdbc); Statement s = c.createStatement()) {
            try (ResultSet r = s.executeQuery("SELECT count(*) FROM " + schema + ".jobs")) {
                r.next();
                assertEquals(RaceChild.KEYS, r.getInt(1), "jobs in PostgreSQL");
            }
            try (ResultSet r = s.executeQuery("SELECT encode(key_digest, 'hex'), id FROM " + schema + ".jobs WHERE key_held")) {
                int bindings = 0;
                while (r.next()) {
                    bindings++;
                    String key = "race-" + keyNumber(idByKey, r.getString(1));
                    assertEquals(idByKey.get(key), Long.toString(r.getLong(2)), "holder of " + key);
                }
                assertEquals(RaceChild.KEYS, bindings);
            }
        }
    }

    private static int keyNumber(Map<String, String> idByKey, String digest) {
        for (int k = 0; k < RaceChild.KEYS; k++) {
            if (EnqueueTest.sha256Hex("race-" + k).equals(digest)) {
                return k;
            }
        }
        throw new AssertionError("binding for an unknown key: " + digest);
    }

    private static String read(Process p) throws IOException {
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
}
