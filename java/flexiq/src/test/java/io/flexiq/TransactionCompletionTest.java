package io.flexiq;

import static io.flexiq.WorkerTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A handler that completes its job, or stores a checkpoint, in its own transaction on the
 * application's connection: the job's completion and the handler's writes commit together, or
 * neither does.
 */
class TransactionCompletionTest {
    static final Task<EnqueueTest.Order> CHARGE = EnqueueTest.CHARGE;
    /** Retries at once, so that a job's attempts follow each other quickly. */
    static final EnqueueOptions RETRY_AT_ONCE = EnqueueOptions.builder()
            .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(10))).maxAttempts(5).build();

    /** A table of effects, one row per write, with no unique constraint: a repeat shows. */
    private static String effectsTable() throws Exception {
        String table = "effects_" + TestDatabase.freshSchema();
        TestDatabase.execute("CREATE TABLE " + table + " (job_id text NOT NULL, attempt int NOT NULL)");
        return table;
    }

    /** Opens a transaction on a new connection, as a handler would on its application's pool. */
    private static Connection transaction() throws Exception {
        Connection c = TestDatabase.jdbc("postgres");
        c.setAutoCommit(false);
        return c;
    }

    private static void write(Connection c, String table, JobContext job) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " VALUES (?, ?)")) {
            ps.setString(1, job.jobId());
            ps.setInt(2, job.attempt());
            ps.executeUpdate();
        }
    }

    private static long rows(String table) throws Exception {
        return TestDatabase.scalar("SELECT count(*) FROM " + table);
    }

    @Test
    void theJobCompletesWhenTheHandlersTransactionCommitsAndNotBefore() throws Exception {
        String table = effectsTable();
        ObservabilityTest.Recorder recorder = new ObservabilityTest.Recorder();
        List<JobState> seenBeforeCommit = new CopyOnWriteArrayList<>();
        try (FlexiQ queue = TestDatabase.client()) {
            queue.addListener(recorder);
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 100));
            WorkerTest.running(queue.worker().handle(CHARGE, (order, job) -> {
                Connection c = transaction();
                try {
                    write(c, table, job);
                    job.completeIn(c);
                    seenBeforeCommit.add(WorkerTest.job(queue, job.jobId()).state());
                    c.commit();
                } finally {
                    c.close();
                }
            }), () -> {
                await("the job to complete", () -> WorkerTest.job(queue, id).state() == JobState.COMPLETED);
                await("its completed event", () -> !recorder.jobs(e -> e.kind() == JobEvent.Kind.COMPLETED).isEmpty());
            });
            assertEquals(List.of(JobState.RUNNING), seenBeforeCommit, "others see the job running until the commit");
            assertEquals(1, rows(table));
            assertEquals(1, WorkerTest.job(queue, id).attempt());
        }
    }

    @Test
    void aTransactionThatRollsBackLeavesNeitherTheWriteNorTheCompletionAndTheAttemptFails() throws Exception {
        String table = effectsTable();
        try (CapturedLogs logs = new CapturedLogs(); FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(2, 100), RETRY_AT_ONCE);
            WorkerTest.running(queue.worker().handle(CHARGE, (order, job) -> {
                Connection c = transaction();
                try {
                    write(c, table, job);
                    job.completeIn(c);
                    if (job.attempt() == 1) {
                        c.rollback(); // and the handler returns as if all went well
                    } else {
                        c.commit();
                    }
                } finally {
                    c.close();
                }
            }), () -> {
                await("the job to complete", () -> WorkerTest.job(queue, id).state() == JobState.COMPLETED);
            });
            assertEquals(2, WorkerTest.job(queue, id).attempt(), "the attempt whose transaction rolled back failed");
            assertEquals(1, TestDatabase.scalar("SELECT count(*) FROM " + table + " WHERE attempt = 2"));
            assertEquals(1, rows(table), "the first attempt's write was rolled back with its completion");
            List<String> failed = logs.at(Level.WARN, "attempt 1 of 5 failed").stream()
                    .map(e -> e.getFormattedMessage()).toList();
            assertEquals(1, failed.size(), failed.toString());
            assertTrue(failed.get(0).contains("the transaction in which it completed the job did not commit"),
                    failed.get(0));
        }
    }

    @Test
    void anAttemptThatNoLongerHoldsItsJobIsToldAndItsTransactionRollsBack() throws Exception {
        String table = effectsTable();
        List<Throwable> thrown = new CopyOnWriteArrayList<>();
        try (FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(3, 100), RETRY_AT_ONCE);
            WorkerTest.running(queue.worker().handle(CHARGE, (order, job) -> {
                Connection c = transaction();
                try {
                    write(c, table, job);
                    if (job.attempt() == 1) {
                        // Another attempt takes the job meanwhile, as one would once this
                        // attempt's lease had passed.
                        TestDatabase.execute("UPDATE " + queue.schema() + ".jobs SET attempt = attempt + 1"
                                + " WHERE id = " + job.jobId());
                    }
                    job.completeIn(c);
                    c.commit();
                } catch (Exception e) {
                    thrown.add(e);
                    c.rollback();
                    throw e;
                } finally {
                    c.close();
                }
            }), () -> {
                await("the first attempt to be refused", () -> !thrown.isEmpty());
            });
            assertInstanceOf(JobLeaseLostException.class, thrown.get(0));
            assertTrue(thrown.get(0).getMessage().contains("roll the transaction back"), thrown.get(0).getMessage());
            assertEquals(0, rows(table), "the refused attempt's write was rolled back");
            assertEquals(JobState.RUNNING, WorkerTest.job(queue, id).state(), "the later attempt decides");
        }
    }

    @Test
    void aConnectionInAutoCommitIsRefused() throws Exception {
        List<Throwable> thrown = new CopyOnWriteArrayList<>();
        try (FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(4, 100),
                    EnqueueOptions.builder().maxAttempts(1).build());
            WorkerTest.running(queue.worker().handle(CHARGE, (order, job) -> {
                try (Connection c = TestDatabase.jdbc("postgres")) {
                    job.completeIn(c);
                } catch (IllegalStateException e) {
                    thrown.add(e);
                    throw e;
                }
            }), () -> {
                await("the job to fail", () -> WorkerTest.job(queue, id).state() == JobState.DEAD);
            });
            assertEquals(1, thrown.size());
            assertTrue(thrown.get(0).getMessage().contains("auto-commit off"), thrown.get(0).getMessage());
        }
    }

    @Test
    void aCheckpointStoredInTheTransactionCommitsWithTheStagesWrite() throws Exception {
        String table = effectsTable();
        AtomicInteger stageRuns = new AtomicInteger();
        try (FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(5, 100), RETRY_AT_ONCE);
            WorkerTest.running(queue.worker().handle(CHARGE, (order, job) -> {
                Connection c = transaction();
                try {
                    String charge = job.checkpoint(c, "charge", String.class, () -> {
                        stageRuns.incrementAndGet();
                        write(c, table, job);
                        return "ch_" + job.attempt();
                    });
                    if (job.attempt() == 1) {
                        c.rollback(); // the stage's write and its checkpoint go together
                        throw new IllegalStateException("fails after the stage");
                    }
                    c.commit();
                    if (job.attempt() == 2) {
                        throw new IllegalStateException("fails after the commit");
                    }
                    assertEquals("ch_2", charge, "the third attempt reads the second's checkpoint");
                } finally {
                    c.close();
                }
            }), () -> {
                await("the job to complete", () -> WorkerTest.job(queue, id).state() == JobState.COMPLETED);
            });
            assertEquals(3, WorkerTest.job(queue, id).attempt());
            assertEquals(2, stageRuns.get(), "the stage runs again only where its checkpoint did not commit");
            assertEquals(1, rows(table));
        }
    }

    @Test
    void aRoleWithoutTheWorkersPrivilegesIsToldWhichGrantItNeeds() throws Exception {
        List<Throwable> thrown = new CopyOnWriteArrayList<>();
        try (FlexiQ queue = TestDatabase.client()) {
            String role = queue.schema() + "_app";
            TestDatabase.execute("CREATE ROLE \"" + role + "\" LOGIN");
            queue.grantProducer(role);
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(6, 100),
                    EnqueueOptions.builder().maxAttempts(1).build());
            WorkerTest.running(queue.worker().handle(CHARGE, (order, job) -> {
                try (Connection c = TestDatabase.jdbc(role)) {
                    c.setAutoCommit(false);
                    job.completeIn(c);
                    c.commit();
                } catch (StorageException e) {
                    thrown.add(e);
                    throw e;
                }
            }), () -> {
                await("the job to fail", () -> WorkerTest.job(queue, id).state() == JobState.DEAD);
            });
            assertEquals(1, thrown.size());
            assertTrue(thrown.get(0).getMessage().contains("grant them with FlexiQ.grantWorker(role)"),
                    thrown.get(0).getMessage());
        }
    }
}
