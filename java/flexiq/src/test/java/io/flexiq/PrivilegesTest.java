package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.EnqueueTest.Order;
import io.flexiq.internal.worker.ClaimBuffer;
import io.flexiq.internal.worker.NativeWorkerStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Roles other than the schema's owner, holding exactly what {@link FlexiQ#grantProducer} or
 * {@link FlexiQ#grantWorker} gives them, through the real library. PUBLIC's EXECUTE on the
 * schema's functions is revoked first, as hardened databases do, so the grants must name every
 * function they need.
 */
class PrivilegesTest {
    /** A schema, migrated by its owner, whose functions PUBLIC may not execute. */
    private static FlexiQ owner(String schema) throws SQLException {
        FlexiQ owner = FlexiQ.builder(TestDatabase.url()).schema(schema).migrate(true).build();
        TestDatabase.execute("REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA " + schema + " FROM PUBLIC");
        return owner;
    }

    /** A LOGIN role whose name (mixed case, a dash) only a quoted identifier finds. */
    private static String role(String schema, String what) throws SQLException {
        String role = schema + "-" + what;
        TestDatabase.execute("CREATE ROLE \"" + role + "\" LOGIN");
        return role;
    }

    private static FlexiQ connectAs(String role, String schema) {
        return FlexiQ.builder(TestDatabase.url(role)).schema(schema).build();
    }

    private static void refused(String what, Executable call) {
        StorageException e = assertThrows(StorageException.class, call, what);
        assertTrue(e.getMessage().contains("permission denied"), what + ": " + e.getMessage());
    }

    private static void refusedSql(String role, String sql) throws SQLException {
        try (Connection c = TestDatabase.jdbc(role); Statement s = c.createStatement()) {
            SQLException e = assertThrows(SQLException.class, () -> s.execute(sql), sql);
            assertEquals("42501", e.getSQLState(), sql + ": " + e.getMessage());
        }
    }

    @Test
    void aProducerEnqueuesKeyedUnkeyedAndInBulkAndCannotRunChangeOrDeleteJobs() throws Exception {
        String schema = TestDatabase.freshSchema();
        try (FlexiQ owner = owner(schema)) {
            String role = role(schema, "Producer");
            owner.grantProducer(role);
            owner.grantProducer(role);
            try (FlexiQ producer = connectAs(role, schema)) {
                String unkeyed = producer.enqueue(EnqueueTest.CHARGE, new Order(1, 1));
                EnqueueOptions keyed = EnqueueOptions.builder().idempotencyKey("order-2").build();
                EnqueueResult first = producer.enqueueWithResult(EnqueueTest.CHARGE, new Order(2, 2), keyed);
                EnqueueResult again = producer.enqueueWithResult(EnqueueTest.CHARGE, new Order(2, 2), keyed);
                assertEquals(EnqueueOutcome.ACCEPTED, first.outcome());
                assertEquals(EnqueueOutcome.REPLAYED, again.outcome());
                assertEquals(first.jobId(), again.jobId());
                List<Order> orders = List.of(new Order(3, 3), new Order(4, 4));
                assertEquals(2, producer.enqueueMany(EnqueueTest.CHARGE, orders, EnqueueOptions.defaults()).size());
                EnqueueOptions derived = EnqueueOptions.builder().idempotent(true).build();
                List<String> keyedBulk = producer.enqueueMany(EnqueueTest.CHARGE, orders, derived);
                assertEquals(keyedBulk, producer.enqueueMany(EnqueueTest.CHARGE, orders, derived), "replayed");
                assertTrue(producer.getJob(unkeyed).isPresent());
                // On the role's own connection, in its transaction, a conflicting batch included.
                try (Connection c = TestDatabase.jdbc(role)) {
                    c.setAutoCommit(false);
                    assertEquals(first.jobId(), producer.enqueue(c, EnqueueTest.CHARGE, new Order(2, 2), keyed));
                    producer.enqueueMany(c, EnqueueTest.CHARGE, List.of(new Order(5, 5)), EnqueueOptions.defaults());
                    assertThrows(IdempotencyConflictException.class, () -> producer.enqueueManyWithResults(c, List.of(
                            EnqueueRequest.of(EnqueueTest.CHARGE, new Order(6, 6), derived),
                            EnqueueRequest.of(EnqueueTest.CHARGE, new Order(9, 9), keyed))));
                    c.commit();
                }

                refused("claim", () -> new NativeWorkerStore(producer.handle()).claim(new String[] {"default"},
                        new String[] {EnqueueTest.CHARGE.name()}, 1, 30_000, 1, new ClaimBuffer(1)));
                refused("cancel", () -> producer.cancel(unkeyed));
                refused("mark completed", () -> producer.markCompleted(unkeyed));
                refused("purge", () -> producer.purge(unkeyed));
                refusedSql(role, "DELETE FROM " + schema + ".jobs");
                refusedSql(role, "UPDATE " + schema + ".jobs SET state = 'cancelled'");
                refusedSql(role, "TRUNCATE " + schema + ".jobs");
            }
            assertEquals(7, TestDatabase.scalar("SELECT count(*) FROM " + schema + ".jobs WHERE state = 'available'"
                    + " AND attempt = 0"));
            IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                    () -> owner.grantProducer(schema + "-nobody"));
            assertTrue(missing.getMessage().contains("does not exist"), missing.getMessage());
        }
    }

    @Test
    void aWorkerRunsJobsThroughRetriesAndCheckpointsAndCannotDeleteOrTruncate() throws Exception {
        String schema = TestDatabase.freshSchema();
        try (FlexiQ owner = owner(schema)) {
            String role = role(schema, "Worker");
            owner.grantWorker(role);
            String id = owner.enqueue(EnqueueTest.CHARGE, new Order(7, 700), EnqueueOptions.builder()
                    .uniqueKey("order-7").retryPolicy(WorkerTest.FAST_RETRY).build());
            try (FlexiQ worker = connectAs(role, schema)) {
                AtomicInteger charges = new AtomicInteger();
                ConcurrentLinkedQueue<String> receipts = new ConcurrentLinkedQueue<>();
                WorkerTest.running(worker.worker()
                        .handle(EnqueueTest.CHARGE, (order, job) -> {
                            String charge = job.checkpoint("charge", String.class,
                                    () -> "ch_" + charges.incrementAndGet());
                            if (job.attempt() == 1) {
                                throw new IllegalStateException("receipt service down");
                            }
                            receipts.add(charge + " on attempt " + job.attempt());
                        })
                        .lease(Duration.ofMillis(300))
                        .pollInterval(Duration.ofMillis(20)), () -> {
                    WorkerTest.await("the job to complete",
                            () -> WorkerTest.job(worker, id).state() == JobState.COMPLETED);
                });
                assertEquals(1, charges.get(), "the checkpoint held the charge");
                assertEquals(List.of("ch_1 on attempt 2"), List.copyOf(receipts));
                JobInfo done = WorkerTest.job(owner, id);
                assertEquals(2, done.attempt());
                assertFalse(done.keyHeld(), "completing released the key");

                refused("purge", () -> worker.purge(id));
                refused("enqueue", () -> worker.enqueue(EnqueueTest.CHARGE, new Order(8, 8)));
                refusedSql(role, "DELETE FROM " + schema + ".jobs");
                refusedSql(role, "DELETE FROM " + schema + ".checkpoints");
                refusedSql(role, "TRUNCATE " + schema + ".jobs");
                refusedSql(role, "UPDATE " + schema + ".jobs SET payload = ''");
                refusedSql(role, "DROP TABLE " + schema + ".checkpoints");
            }
            assertEquals(1, TestDatabase.scalar("SELECT count(*) FROM " + schema + ".jobs"));
        }
    }
}
