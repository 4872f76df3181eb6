package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexiq.EnqueueTest.Order;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Any role that can connect may NOTIFY on a client's wake-up channel. A wake-up only makes a
 * worker look for due jobs; what it claims is decided by the claim statement, so a forged one
 * never makes it take a job it should not.
 */
class WakeupChannelTest {
    /** Forged wake-ups of every shape: the worker's queue, another queue, none, junk. */
    private static final String[] FORGERIES = {
        "NOTIFY %s, 'default'",
        "NOTIFY %s, 'other'",
        "NOTIFY %s",
        "SELECT pg_notify('%s', 'unhandled')",
        "SELECT pg_notify('%s', repeat('x', 7000))",
    };

    private static void forge(Statement s, String channel, int n) throws SQLException {
        s.execute(String.format(FORGERIES[n % FORGERIES.length], channel));
    }

    private static String state(FlexiQ queue, String id) {
        JobInfo job = WorkerTest.job(queue, id);
        return job.state() + " attempt " + job.attempt() + " due " + job.runAt() + " started " + job.startedAt();
    }

    @Test
    void forgedWakeUpsNeverMakeAWorkerTakeAJobItShouldNot() throws Exception {
        String schema = TestDatabase.freshSchema();
        String channel = "flexiq_" + schema;
        String forger = schema + "_forger";
        TestDatabase.execute("CREATE ROLE " + forger + " LOGIN");
        try (FlexiQ queue = FlexiQ.builder(TestDatabase.url()).schema(schema).migrate(true).build()) {
            EnqueueOptions inAnHour = EnqueueOptions.builder().delay(Duration.ofHours(1)).build();
            String future = queue.enqueue(EnqueueTest.CHARGE, new Order(1, 1), inAnHour);
            String unhandled = queue.enqueue(Task.of("unhandled", Order.class), new Order(2, 2));
            String elsewhere = queue.enqueue(EnqueueTest.CHARGE, new Order(3, 3),
                    EnqueueOptions.builder().queue("other").build());
            String parked = queue.enqueue(EnqueueTest.CHARGE, new Order(4, 4), inAnHour);
            List<String> untouched = List.of(future, unhandled, elsewhere);
            List<String> before = untouched.stream().map(id -> state(queue, id)).toList();

            ConcurrentLinkedQueue<String> ran = new ConcurrentLinkedQueue<>();
            WorkerProbe probe = WorkerProbe.of(queue);
            WorkerTest.running(queue.worker()
                    .handle(EnqueueTest.CHARGE, (order, job) -> ran.add(job.jobId()))
                    .pollInterval(Duration.ofMinutes(10)), probe, () -> {
                // Once the worker listens and has looked, only a wake-up makes it look again
                // before its ten-minute poll.
                probe.awaitIdle();
                try (Connection c = TestDatabase.jdbc(forger); Statement s = c.createStatement()) {
                    // Due now, silently: an UPDATE announces nothing.
                    TestDatabase.execute("UPDATE " + schema + ".jobs SET run_at = now(), state = 'available'"
                            + " WHERE id = " + parked);
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    int forged = 0;
                    while (ran.isEmpty()) {
                        if (System.nanoTime() > deadline) {
                            throw new AssertionError("no forged wake-up reached the worker");
                        }
                        forge(s, channel, forged++);
                        Thread.sleep(20);
                    }
                    // Awake and listening: every forgery now makes it look, and find nothing.
                    for (int i = 0; i < 100; i++) {
                        long generation = probe.generation();
                        forge(s, channel, forged++);
                        probe.awaitWaitingPast(generation);
                    }
                }
                WorkerTest.await("the due job to complete",
                        () -> WorkerTest.job(queue, parked).state() == JobState.COMPLETED);
            });
            assertEquals(List.of(parked), List.copyOf(ran), "only the due job of its queue and task ran");
            assertEquals(before, untouched.stream().map(id -> state(queue, id)).toList());
        }
    }
}
