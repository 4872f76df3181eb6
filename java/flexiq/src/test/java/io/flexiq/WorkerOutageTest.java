package io.flexiq;

import static io.flexiq.WorkerTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import io.flexiq.internal.worker.ClaimBuffer;
import io.flexiq.internal.worker.ForwardingStore;
import io.flexiq.internal.worker.NativeWorkerStore;
import io.flexiq.internal.worker.WorkerStore;
import io.flexiq.test.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL stopping for a few seconds under a running worker: no finished handler runs
 * again, no succeeded job is dead-lettered, no job dies unrun.
 */
class WorkerOutageTest {
    static final Task<EnqueueTest.Order> CHARGE = EnqueueTest.CHARGE;
    static final int JOBS = 5_000;

    @Test
    void aThreeSecondStopUnderFiveThousandJobsRunsEachOnceAndKillsNone() throws Exception {
        try (PostgresServer pg = PostgresServer.builder().durable(false).start()) {
            for (int round = 1; round <= 3; round++) {
                runThroughAnOutage(pg, "outage" + round);
            }
        }
    }

    private static void runThroughAnOutage(PostgresServer pg, String schema) throws Exception {
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        try (CapturedLogs logs = new CapturedLogs();
                FlexiQ queue = FlexiQ.builder(pg.url()).schema(schema).migrate(true).build()) {
            List<EnqueueTest.Order> orders = new ArrayList<>();
            for (int i = 0; i < JOBS; i++) {
                orders.add(new EnqueueTest.Order(i, i));
            }
            // One attempt each: a lost completion or a lost claim would leave a job dead.
            queue.enqueueMany(CHARGE, orders, EnqueueOptions.builder().maxAttempts(1).build());
            WorkerTest.running(queue.worker()
                    .handle(CHARGE, (order, job) -> {
                        runs.computeIfAbsent(Long.parseLong(job.jobId()), id -> new AtomicInteger()).incrementAndGet();
                        // A little work per job, so that the jobs run on across the outage.
                        Thread.sleep(1);
                    })
                    .concurrency(8)
                    .pollInterval(Duration.ofMillis(100)), () -> {
                await("a fifth of the jobs to run", () -> runs.size() > JOBS / 5);
                pg.shutDown();
                // The outage itself: real time the worker must ride out with PostgreSQL gone.
                Thread.sleep(3_000);
                pg.restart();
                await("every job to finish", () -> finished(pg, schema) == JOBS);
                await("the outage's end to be logged",
                        () -> !logs.at(Level.INFO, "reaching PostgreSQL works again after").isEmpty());
            });
            Map<String, Long> states = states(pg, schema);
            assertEquals(Map.of("completed", (long) JOBS), states, schema + ": every job completed");
            List<Long> twice = runs.entrySet().stream().filter(e -> e.getValue().get() > 1).map(Map.Entry::getKey).toList();
            assertEquals(List.of(), twice, schema + ": handlers that ran more than once");
            assertEquals(JOBS, runs.size(), schema + ": every handler ran");
            // Reported once when it started and once when it ended, not per retry or per thread.
            List<String> logged = logs.matching(e -> e.getLevel().isGreaterOrEqual(Level.WARN)
                    || e.getFormattedMessage().contains("works again")).stream().map(e -> e.getLevel() + " "
                    + e.getFormattedMessage()).toList();
            assertEquals(1, logs.at(Level.INFO, "reaching PostgreSQL works again after").size(), logged.toString());
            assertEquals(1, logs.matching(e -> e.getLevel() == Level.WARN).size(), logged.toString());
        }
    }

    /** Completed and dead jobs of {@code schema}; -1 while PostgreSQL does not answer. */
    static long finished(PostgresServer pg, String schema) {
        try {
            Map<String, Long> states = states(pg, schema);
            return states.getOrDefault("completed", 0L) + states.getOrDefault("dead", 0L);
        } catch (Exception e) {
            return -1; // PostgreSQL not back yet
        }
    }

    /** How many jobs of {@code schema} are in each state. */
    static Map<String, Long> states(PostgresServer pg, String schema) throws Exception {
        Map<String, Long> states = new TreeMap<>();
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl());
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT state, count(*) FROM " + schema + ".jobs GROUP BY state")) {
            while (r.next()) {
                states.put(r.getString(1), r.getLong(2));
            }
        }
        return states;
    }

    @Test
    void jobsOfAClaimWhoseAnswerWasLostAreRecoveredAndRun() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            List<String> ids = queue.enqueueMany(CHARGE, List.of(new EnqueueTest.Order(1, 1),
                    new EnqueueTest.Order(2, 2), new EnqueueTest.Order(3, 3)),
                    EnqueueOptions.builder().maxAttempts(1).build());
            AtomicBoolean answerLost = new AtomicBoolean();
            WorkerStore real = new NativeWorkerStore(queue.handle());
            // The first claim commits, then its answer is lost, as when the connection breaks.
            WorkerStore losesFirstAnswer = new ForwardingStore(real) {
                @Override
                public int claim(String[] queues, String[] tasks, int limit, long leaseMillis, long token,
                        ClaimBuffer out) {
                    int got = real.claim(queues, tasks, limit, leaseMillis, token, out);
                    if (got > 0 && answerLost.compareAndSet(false, true)) {
                        throw new StorageUnavailableException("PostgreSQL is unavailable: connection reset");
                    }
                    return got;
                }
            };
            Map<String, Integer> attempts = new ConcurrentHashMap<>();
            Worker worker = queue.worker()
                    .handle(CHARGE, (order, job) -> attempts.put(job.jobId(), job.attempt()))
                    .pollInterval(Duration.ofMillis(50))
                    .build(losesFirstAnswer)
                    .start();
            try {
                await("the jobs to complete", () -> ids.stream()
                        .allMatch(id -> WorkerTest.job(queue, id).state() == JobState.COMPLETED));
            } finally {
                worker.close();
            }
            assertTrue(answerLost.get(), "a claim's answer was lost");
            assertEquals(Map.of(ids.get(0), 1, ids.get(1), 1, ids.get(2), 1), attempts, "each ran once, on attempt 1");
        }
    }

    @Test
    void closingDoesNotWaitLongForARegistrationRemovalThatHangs() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            java.util.concurrent.CountDownLatch removing = new java.util.concurrent.CountDownLatch(1);
            WorkerStore hangs = new ForwardingStore(new NativeWorkerStore(queue.handle())) {
                @Override
                public void deregister(String id) {
                    removing.countDown();
                    try {
                        Thread.sleep(60_000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            };
            Worker worker = queue.worker().handle(CHARGE, (order, job) -> { }).build(hangs).start();
            await("the worker to register", () -> queue.workers().size() == 1);
            long start = System.nanoTime();
            worker.close();
            long millis = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals(0, removing.getCount(), "the removal was tried");
            // Its wait is bounded (a second for a heartbeat under way, two for the removal); the
            // rest is room for a busy machine.
            assertTrue(millis < 10_000, "close took " + millis + " ms");
            assertEquals(1, queue.workers().size(), "the registration is left to maintenance");
        }
    }
}
