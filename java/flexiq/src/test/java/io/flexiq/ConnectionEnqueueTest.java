package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Enqueue on the application's own JDBC connection, inside its transaction. */
class ConnectionEnqueueTest {
    static final Task<EnqueueTest.Order> CHARGE = EnqueueTest.CHARGE;

    static FlexiQ queue;

    @BeforeAll
    static void connect() throws SQLException {
        queue = TestDatabase.client();
        TestDatabase.execute("CREATE TABLE IF NOT EXISTS " + queue.schema() + "_orders (id bigint PRIMARY KEY)");
    }

    @AfterAll
    static void close() {
        queue.close();
    }

    static Connection transaction() throws SQLException {
        Connection c = TestDatabase.jdbc("postgres");
        c.setAutoCommit(false);
        return c;
    }

    static EnqueueOptions key(String key) {
        return EnqueueOptions.builder().uniqueKey(key).build();
    }

    static String unique(String what) {
        return what + "-" + UUID.randomUUID();
    }

    static long orders(long id) throws SQLException {
        return TestDatabase.scalar("SELECT count(*) FROM " + queue.schema() + "_orders WHERE id = " + id);
    }

    /** Waits until some session waits for a lock: the blocked enqueue has reached PostgreSQL. */
    static void awaitLockWait() throws Exception {
        WorkerTest.await("a session waiting for a lock", () -> {
            try {
                return TestDatabase.scalar("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'") > 0;
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void aRolledBackEnqueueLeavesNoJobAndFreesItsKey() throws Exception {
        String k = unique("rollback");
        try (Connection c = transaction()) {
            EnqueueResult r = queue.enqueueWithResult(c, CHARGE, new EnqueueTest.Order(1, 1), key(k));
            assertEquals(EnqueueOutcome.ACCEPTED, r.outcome());
            assertTrue(queue.getJob(r.jobId()).isEmpty(), "uncommitted: invisible to the client's own connections");
            c.rollback();
            assertTrue(queue.getJob(r.jobId()).isEmpty());
            assertFalse(c.isClosed(), "FlexiQ never closes the caller's connection");
        }
        EnqueueResult again = queue.enqueueWithResult(CHARGE, new EnqueueTest.Order(1, 1), key(k));
        assertEquals(EnqueueOutcome.ACCEPTED, again.outcome(), "the key was free again");
    }

    @Test
    void aCommittedEnqueueIsThereAndWithAutoCommitItCommitsByItself() throws Exception {
        try (Connection c = transaction()) {
            String id = queue.enqueue(c, CHARGE, new EnqueueTest.Order(2, 2), key(unique("commit")));
            c.commit();
            assertEquals(JobState.AVAILABLE, queue.getJob(id).orElseThrow().state());
        }
        try (Connection c = TestDatabase.jdbc("postgres")) {
            assertTrue(c.getAutoCommit());
            String id = queue.enqueue(c, CHARGE, new EnqueueTest.Order(3, 3));
            assertTrue(queue.getJob(id).isPresent(), "auto-commit: committed by the statement itself");
        }
    }

    @Test
    void anIdleWorkerStartsTheJobRightAfterTheCommitAndNeverBefore() throws Exception {
        Task<String> task = Task.of(unique("woken"), String.class);
        ConcurrentHashMap<String, Long> startedAt = new ConcurrentHashMap<>();
        WorkerProbe probe = WorkerProbe.of(queue);
        WorkerTest.running(queue.worker().handle(task, (payload, job) -> startedAt.put(payload, System.nanoTime()))
                .pollInterval(Duration.ofSeconds(30)), probe, () -> {
                    probe.awaitIdle();
                    List<Long> latencies = new ArrayList<>();
                    for (int i = 0; i < 5; i++) {
                        String payload = "p" + i;
                        long committed;
                        try (Connection c = transaction()) {
                            queue.enqueue(c, task, payload);
                            // A job of the same task committed after it wakes the worker, which
                            // looks while this one's transaction is open and runs only that one.
                            String marker = "marker" + i;
                            queue.enqueue(task, marker);
                            WorkerTest.await("the marker's start", () -> startedAt.containsKey(marker));
                            assertFalse(startedAt.containsKey(payload), "started before its commit");
                            // Idle again, so that only the commit's announcement wakes it.
                            probe.awaitIdle();
                            assertFalse(startedAt.containsKey(payload), "started before its commit");
                            c.commit();
                            committed = System.nanoTime();
                        }
                        WorkerTest.await("the job's start", () -> startedAt.containsKey(payload));
                        latencies.add(TimeUnit.NANOSECONDS.toMillis(startedAt.get(payload) - committed));
                    }
                    List<Long> sorted = new ArrayList<>(latencies);
                    sorted.sort(null);
                    System.out.println("commit-to-start latencies (ms): " + latencies);
                    assertTrue(sorted.get(2) < 100, "median commit-to-start " + sorted.get(2) + " ms: " + latencies);
                });
    }

    @Test
    void aWorkerPollingEvery50msNeverRunsAJobWhoseTransactionIsOpen() throws Exception {
        Task<String> task = Task.of(unique("held"), String.class);
        AtomicLong runs = new AtomicLong();
        WorkerProbe probe = WorkerProbe.of(queue);
        WorkerTest.running(queue.worker().handle(task, (payload, job) -> runs.incrementAndGet())
                .pollInterval(Duration.ofMillis(50)), probe, () -> {
                    try (Connection c = transaction()) {
                        queue.enqueue(c, task, "held", key(unique("held")));
                        // Polls that began after the enqueue, each of which would have taken the
                        // job had it been visible (the first may have been under way).
                        probe.awaitClaims(probe.claims(), 10);
                        assertEquals(0, runs.get(), "the handler ran while the enqueue's transaction was open");
                        c.commit();
                    }
                    WorkerTest.await("the committed job's run", () -> runs.get() == 1);
                });
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aSecondTransactionWaitsForTheFirstThenReplaysOrTakesTheKey(boolean firstCommits) throws Exception {
        String k = unique("race");
        EnqueueTest.Order order = new EnqueueTest.Order(4, 4);
        try (Connection first = transaction(); Connection second = transaction()) {
            String firstId = queue.enqueue(first, CHARGE, order, key(k));
            CompletableFuture<EnqueueResult> waiting = CompletableFuture.supplyAsync(
                    () -> queue.enqueueWithResult(second, CHARGE, order, key(k)));
            awaitLockWait();
            assertFalse(waiting.isDone(), "the second enqueue did not wait");
            if (firstCommits) {
                first.commit();
            } else {
                first.rollback();
            }
            EnqueueResult r = waiting.get(10, TimeUnit.SECONDS);
            second.commit();
            if (firstCommits) {
                assertEquals(new EnqueueResult(firstId, EnqueueOutcome.REPLAYED, null), r);
            } else {
                assertEquals(EnqueueOutcome.ACCEPTED, r.outcome());
                assertNotEquals(firstId, r.jobId());
            }
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aSecondBatchWaitsForTheFirstThenReplaysOrTakesTheKeys(boolean firstCommits) throws Exception {
        String shared = unique("shared");
        List<EnqueueRequest<?>> firstBatch = List.of(
                EnqueueRequest.of(CHARGE, new EnqueueTest.Order(5, 1), key(unique("a"))),
                EnqueueRequest.of(CHARGE, new EnqueueTest.Order(5, 2), key(shared)));
        List<EnqueueRequest<?>> secondBatch = List.of(
                EnqueueRequest.of(CHARGE, new EnqueueTest.Order(5, 2), key(shared)),
                EnqueueRequest.of(CHARGE, new EnqueueTest.Order(5, 3), key(unique("b"))));
        try (Connection first = transaction(); Connection second = transaction()) {
            List<EnqueueResult> mine = queue.enqueueManyWithResults(first, firstBatch);
            CompletableFuture<List<EnqueueResult>> waiting = CompletableFuture.supplyAsync(
                    () -> queue.enqueueManyWithResults(second, secondBatch));
            awaitLockWait();
            assertFalse(waiting.isDone(), "the second batch did not wait");
            if (firstCommits) {
                first.commit();
            } else {
                first.rollback();
            }
            List<EnqueueResult> theirs = waiting.get(10, TimeUnit.SECONDS);
            second.commit();
            assertEquals(firstCommits ? EnqueueOutcome.REPLAYED : EnqueueOutcome.ACCEPTED, theirs.get(0).outcome());
            assertEquals(firstCommits, theirs.get(0).jobId().equals(mine.get(1).jobId()));
            assertEquals(EnqueueOutcome.ACCEPTED, theirs.get(1).outcome());
        }
    }

    /**
     * Under REPEATABLE READ and SERIALIZABLE a transaction cannot see a job committed after its
     * snapshot. It gets a TransactionRetryException (40001), never a wrong id or a second job,
     * and its retry replays.
     */
    @ParameterizedTest
    @ValueSource(ints = {Connection.TRANSACTION_REPEATABLE_READ, Connection.TRANSACTION_SERIALIZABLE})
    void underSnapshotIsolationAKeyCommittedAfterTheSnapshotAsksForARetry(int isolation) throws Exception {
        String k = unique("snapshot");
        EnqueueTest.Order order = new EnqueueTest.Order(6, 6);
        String committedId;
        try (Connection late = transaction()) {
            late.setTransactionIsolation(isolation);
            try (Statement s = late.createStatement()) {
                s.execute("SELECT 1"); // takes the snapshot
            }
            committedId = queue.enqueue(CHARGE, order, key(k));
            TransactionRetryException e = assertThrows(TransactionRetryException.class,
                    () -> queue.enqueue(late, CHARGE, order, key(k)));
            assertEquals("40001", e.sqlState());
            assertTrue(e.getMessage().contains("roll the transaction back and run it again"), e.getMessage());
            assertFalse(e.getMessage().contains("\n"), "the server's context stays in the cause: " + e.getMessage());
            assertTrue(e.getCause().getMessage().contains("PL/pgSQL"), e.getCause().getMessage());
            late.rollback();
            assertEquals(new EnqueueResult(committedId, EnqueueOutcome.REPLAYED, null),
                    queue.enqueueWithResult(late, CHARGE, order, key(k)), "the retried transaction replays");
            late.commit();
        }
        // And when the second transaction waited on the first's uncommitted insert.
        String k2 = unique("snapshot-wait");
        try (Connection first = transaction(); Connection second = transaction()) {
            second.setTransactionIsolation(isolation);
            try (Statement s = second.createStatement()) {
                s.execute("SELECT 1");
            }
            queue.enqueue(first, CHARGE, order, key(k2));
            CompletableFuture<EnqueueResult> waiting = CompletableFuture.supplyAsync(
                    () -> queue.enqueueWithResult(second, CHARGE, order, key(k2)));
            awaitLockWait();
            first.commit();
            Throwable failure = assertThrows(Exception.class, () -> waiting.get(10, TimeUnit.SECONDS)).getCause();
            assertTrue(failure instanceof TransactionRetryException, String.valueOf(failure));
            second.rollback();
        }
        String jobs = queue.schema() + ".jobs";
        assertEquals(1, TestDatabase.scalar("SELECT count(*) FROM " + jobs + " WHERE key_digest = (SELECT key_digest FROM "
                + jobs + " WHERE id = " + committedId + ")"), "one job for the key");
    }

    @Test
    void aConflictLeavesTheTransactionUsableAndWritesNothing() throws Exception {
        String k = unique("conflict");
        String held = queue.enqueue(CHARGE, new EnqueueTest.Order(7, 1), key(k));
        long orderId = Math.abs(UUID.randomUUID().getLeastSignificantBits() % 1_000_000_000L);
        String fresh = unique("fresh");
        try (Connection c = transaction()) {
            IdempotencyConflictException e = assertThrows(IdempotencyConflictException.class,
                    () -> queue.enqueue(c, CHARGE, new EnqueueTest.Order(7, 2), key(k)));
            assertEquals(held, e.existingJobId().orElseThrow());
            assertEquals(List.of("payload"), e.fields());
            // A batch whose other entry is new writes nothing either.
            assertThrows(IdempotencyConflictException.class, () -> queue.enqueueManyWithResults(c, List.of(
                    EnqueueRequest.of(CHARGE, new EnqueueTest.Order(7, 3), key(fresh)),
                    EnqueueRequest.of(CHARGE, new EnqueueTest.Order(7, 2), key(k)))));
            try (Statement s = c.createStatement()) {
                s.execute("INSERT INTO " + queue.schema() + "_orders VALUES (" + orderId + ")");
            }
            c.commit();
        }
        assertEquals(1, orders(orderId), "the caller's own work committed");
        assertEquals(EnqueueOutcome.ACCEPTED,
                queue.enqueueWithResult(CHARGE, new EnqueueTest.Order(7, 3), key(fresh)).outcome(),
                "the refused batch's new entry was not written");
    }

    @Test
    void conflictsLeaveNoErrorInTheServerLog() throws Exception {
        String k = unique("quiet");
        queue.enqueue(CHARGE, new EnqueueTest.Order(8, 1), key(k));
        long from = Files.size(TestDatabase.serverLog());
        assertThrows(IdempotencyConflictException.class, () -> queue.enqueue(CHARGE, new EnqueueTest.Order(8, 2), key(k)));
        assertThrows(IdempotencyConflictException.class, () -> queue.enqueueMany(CHARGE,
                List.of(new EnqueueTest.Order(8, 3), new EnqueueTest.Order(8, 2)), key(k)));
        try (Connection c = transaction()) {
            assertThrows(IdempotencyConflictException.class,
                    () -> queue.enqueue(c, CHARGE, new EnqueueTest.Order(8, 2), key(k)));
            assertThrows(IdempotencyConflictException.class, () -> queue.enqueueManyWithResults(c, List.of(
                    EnqueueRequest.of(CHARGE, new EnqueueTest.Order(8, 4), key(unique("other"))),
                    EnqueueRequest.of(CHARGE, new EnqueueTest.Order(8, 2), key(k)))));
            c.commit();
        }
        // A statement that does fail, so that the check below is known to see the log's errors.
        String marker = "no_such_column_" + UUID.randomUUID().toString().replace('-', '_');
        assertThrows(SQLException.class, () -> TestDatabase.execute("SELECT " + marker));
        String[] logged = new String[1];
        WorkerTest.await("the marker error in the server log", () -> {
            logged[0] = tail(from);
            return logged[0].contains(marker);
        });
        List<String> errors = Arrays.stream(logged[0].split("\n"))
                .filter(line -> line.contains("ERROR") && !line.contains(marker)).toList();
        assertEquals(List.of(), errors, "conflicts must not be logged as errors");
    }

    static String tail(long from) {
        try {
            byte[] all = Files.readAllBytes(TestDatabase.serverLog());
            return new String(all, (int) from, all.length - (int) from, StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aFailingStatementNamesWhatToDoAndKeepsTheDriversException() throws Exception {
        try (Connection c = transaction()) {
            try (Statement s = c.createStatement()) {
                assertThrows(SQLException.class, () -> s.execute("SELECT 1/0"));
            }
            StorageException e = assertThrows(StorageException.class,
                    () -> queue.enqueue(c, CHARGE, new EnqueueTest.Order(9, 9)));
            assertTrue(e.getMessage().contains("25P02") && e.getMessage().contains("roll it back"), e.getMessage());
            assertTrue(e.getCause() instanceof SQLException);
            c.rollback();
        }
        try (FlexiQ elsewhere = FlexiQ.builder(TestDatabase.url()).schema(TestDatabase.freshSchema()).build();
                Connection c = transaction()) {
            StorageException e = assertThrows(StorageException.class,
                    () -> elsewhere.enqueue(c, CHARGE, new EnqueueTest.Order(9, 9)));
            assertTrue(e.getMessage().contains("is the schema migrated"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> queue.enqueue(null, CHARGE, new EnqueueTest.Order(9, 9)));
    }

    @Test
    void worksOnAConnectionFromAPool() throws Exception {
        com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
        config.setJdbcUrl(TestDatabase.jdbcUrl());
        config.setMaximumPoolSize(2);
        config.setAutoCommit(false);
        String k = unique("pooled");
        try (com.zaxxer.hikari.HikariDataSource pool = new com.zaxxer.hikari.HikariDataSource(config)) {
            String id;
            try (Connection c = pool.getConnection()) {
                id = queue.enqueue(c, CHARGE, new EnqueueTest.Order(11, 1), key(k));
                c.rollback();
            }
            assertTrue(queue.getJob(id).isEmpty());
            try (Connection c = pool.getConnection()) {
                id = queue.enqueue(c, CHARGE, new EnqueueTest.Order(11, 1), key(k));
                c.commit();
            }
            try (Connection c = pool.getConnection()) {
                assertEquals(new EnqueueResult(id, EnqueueOutcome.REPLAYED, null),
                        queue.enqueueWithResult(c, CHARGE, new EnqueueTest.Order(11, 1), key(k)));
                c.commit();
            }
        }
    }

    @Test
    void anEmptyBatchTouchesNeitherTheConnectionNorTheDatabase() throws Exception {
        Connection c = transaction();
        c.close();
        assertEquals(List.of(), queue.enqueueMany(c, CHARGE, List.of(), EnqueueOptions.defaults()));
    }

    static long count(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getLong(1);
        }
    }

    @Test
    void jobsEnqueuedInATransactionAreVisibleToItBeforeTheCommit() throws Exception {
        try (Connection c = transaction()) {
            List<String> ids = queue.enqueueMany(c, CHARGE,
                    List.of(new EnqueueTest.Order(10, 1), new EnqueueTest.Order(10, 2)), EnqueueOptions.defaults());
            assertEquals(2, count(c, "SELECT count(*) FROM " + queue.schema() + ".jobs WHERE id IN ("
                    + String.join(",", ids) + ")"));
            c.rollback();
        }
    }
}
