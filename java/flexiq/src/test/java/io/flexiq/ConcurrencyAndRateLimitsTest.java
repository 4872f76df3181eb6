package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Concurrency keys and rate limits kept across three worker processes, as the handlers recorded
 * their runs in PostgreSQL.
 */
class ConcurrencyAndRateLimitsTest {
    /** A job of the test: its concurrency key (or null) and how long its handler takes. */
    public record Call(String key, long sleepMillis) {}

    @Test
    void threeWorkerProcessesKeepEveryKeysLimitAndTheQueuesRateWhileOtherJobsFlow() throws Exception {
        String url = TestDatabase.url();
        String schema = TestDatabase.freshSchema();
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).migrate(true).build()) {
            TestDatabase.execute("CREATE TABLE " + schema + ".runs (job_id bigint, key text, started timestamptz,"
                    + " ended timestamptz)");
            queue.setRateLimit(RateLimit.ofQueue("payments", 5, Duration.ofSeconds(1)));
            // First in line, more of them than a claim takes: a key that lets one job run at a
            // time, each for 300 ms, so that its jobs would take 45 s in all.
            List<EnqueueRequest<Call>> slow = new ArrayList<>();
            for (int i = 0; i < 150; i++) {
                slow.add(EnqueueRequest.of(LimitsChild.CALL, new Call("slow", 300),
                        EnqueueOptions.builder().concurrencyKey("slow", 1).build()));
            }
            queue.enqueueManyWithResults(slow);
            for (int i = 0; i < 12; i++) {
                for (String key : List.of("tenant-a", "tenant-b", "tenant-c")) {
                    queue.enqueue(LimitsChild.CALL, new Call(key, 100),
                            EnqueueOptions.builder().concurrencyKey(key, 2).build());
                }
            }
            for (int i = 0; i < 20; i++) {
                queue.enqueue(LimitsChild.CALL, new Call(null, 50));
            }
            for (int i = 0; i < 15; i++) {
                queue.enqueue(LimitsChild.CALL, new Call("payment", 10), EnqueueOptions.builder().queue("payments")
                        .build());
            }

            List<Process> workers = new ArrayList<>();
            try {
                workers.addAll(ChildProcesses.start(3, LimitsChild.class, url, TestDatabase.jdbcUrl(), schema));
                // The jobs behind the slow key are not held back by it.
                WorkerTest.await("every job but the slow key's to finish", () -> {
                    try {
                        return TestDatabase.scalar("SELECT count(*) FROM " + schema + ".jobs WHERE state <> 'completed'"
                                + " AND concurrency_key IS DISTINCT FROM 'slow'") == 0;
                    } catch (java.sql.SQLException e) {
                        throw new IllegalStateException(e);
                    }
                });
                long slowDone = TestDatabase.scalar("SELECT count(*) FROM " + schema + ".jobs WHERE state = 'completed'"
                        + " AND concurrency_key = 'slow'");
                assertTrue(slowDone < 100, slowDone + " of the slow key's jobs ran first");
            } finally {
                ChildProcesses.stop(workers);
            }

            Map<String, List<long[]>> runs = new HashMap<>();
            try (Connection c = TestDatabase.jdbc("postgres"); Statement s = c.createStatement();
                    ResultSet r = s.executeQuery("SELECT coalesce(key, ''), (extract(epoch FROM started) * 1e6)::bigint,"
                            + " (extract(epoch FROM coalesce(ended, now())) * 1e6)::bigint FROM " + schema + ".runs")) {
                while (r.next()) {
                    runs.computeIfAbsent(r.getString(1), k -> new ArrayList<>()).add(new long[] {r.getLong(2), r.getLong(3)});
                }
            }
            assertEquals(20, runs.get("").size());
            assertEquals(15, runs.get("payment").size());
            assertEquals(1, mostAtOnce(runs.get("slow")), "slow runs one at a time");
            for (String key : List.of("tenant-a", "tenant-b", "tenant-c")) {
                assertEquals(12, runs.get(key).size());
                int most = mostAtOnce(runs.get(key));
                assertTrue(most >= 1 && most <= 2, key + " ran " + most + " at once");
            }
            // The rate, as the claims recorded the starts: no 5 + 1 of them within one second.
            List<Long> starts = new ArrayList<>();
            try (Connection c = TestDatabase.jdbc("postgres"); Statement s = c.createStatement();
                    ResultSet r = s.executeQuery("SELECT (extract(epoch FROM started_at) * 1e6)::bigint FROM " + schema
                            + ".jobs WHERE queue = 'payments' ORDER BY started_at")) {
                while (r.next()) {
                    starts.add(r.getLong(1));
                }
            }
            for (int i = 5; i < starts.size(); i++) {
                assertTrue(starts.get(i) - starts.get(i - 5) >= 1_000_000,
                        "six starts within a second: " + starts.subList(i - 5, i + 1));
            }
            assertTrue(starts.get(starts.size() - 1) - starts.get(0) >= 2_000_000, "15 starts at 5 a second take 2 s");
        }
    }

    @Test
    void limitsAreCheckedWhereTheyAreSet() {
        assertThrows(IllegalArgumentException.class, () -> EnqueueOptions.builder().concurrencyKey("k", 0));
        assertThrows(IllegalArgumentException.class, () -> EnqueueOptions.builder().concurrencyKey("", 1));
        assertThrows(IllegalArgumentException.class, () -> RateLimit.ofQueue("q", 0, Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class, () -> RateLimit.ofQueue("q", 1, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> RateLimit.ofConcurrencyKey("k", 100_001, Duration.ofSeconds(1)));
    }

    @Test
    void aRateLimitCanBeReplacedAndRemoved() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            queue.setRateLimit(RateLimit.ofConcurrencyKey("provider", 10, Duration.ofMinutes(1)));
            queue.setRateLimit(RateLimit.ofConcurrencyKey("provider", 20, Duration.ofMinutes(1)));
            assertEquals(20, TestDatabase.scalar("SELECT starts FROM " + queue.schema()
                    + ".rate_limits WHERE name = 'key:provider'"));
            assertTrue(queue.removeConcurrencyKeyRateLimit("provider"));
            assertEquals(false, queue.removeConcurrencyKeyRateLimit("provider"));
            assertEquals(false, queue.removeQueueRateLimit("provider"), "a queue of that name never had one");
        }
    }

    /** The most runs that overlapped at any instant. */
    private static int mostAtOnce(List<long[]> runs) {
        List<long[]> edges = new ArrayList<>();
        for (long[] r : runs) {
            edges.add(new long[] {r[0], 1});
            edges.add(new long[] {r[1], -1});
        }
        // At one instant an end comes before a start: touching runs do not overlap.
        edges.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        int now = 0;
        int most = 0;
        for (long[] e : edges) {
            now += (int) e[1];
            most = Math.max(most, now);
        }
        return most;
    }
}
