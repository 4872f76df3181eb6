package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Bulk actions on 100,000 dead jobs while a producer enqueues and a worker runs jobs of another
 * queue: each action takes exactly the jobs its filter selects, in bounded batches, a double
 * submit changes nothing, and enqueues and the worker go on. Prints the rates and the slowest
 * enqueue during each action beside a quiet period.
 */
class BulkActionsTest {
    static final Task<EnqueueTest.Order> CHARGE = EnqueueTest.CHARGE;
    static final int DEAD = 100_000;

    @Test
    void redriveCancelAndPurgeOf100000JobsRunInBatchesWhileEnqueuesAndAWorkerGoOn() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            String schema = queue.schema();
            List<EnqueueTest.Order> orders = new ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                orders.add(new EnqueueTest.Order(i, i));
            }
            EnqueueOptions billing = EnqueueOptions.builder().queue("billing").build();
            for (int i = 0; i < DEAD / 1_000; i++) {
                queue.enqueueMany(CHARGE, orders, billing);
            }
            TestDatabase.execute("UPDATE " + schema + ".jobs SET state = 'dead', attempt = 1, finished_at = now(),"
                    + " last_error = 'the gateway was down'", "ANALYZE " + schema + ".jobs");
            // Jobs of another queue, the same task, dead a week ago: outside the time range.
            String old = queue.enqueue(CHARGE, new EnqueueTest.Order(-1, 1), billing);
            TestDatabase.execute("UPDATE " + schema + ".jobs SET state = 'dead', finished_at = now(),"
                    + " created_at = now() - interval '7 days' WHERE id = " + old);
            JobFilter incident = JobFilter.builder(JobState.DEAD).queue("billing").task(CHARGE.name())
                    .createdFrom(Instant.now().minus(Duration.ofHours(1))).build();
            assertEquals(DEAD, queue.countMatching(incident));

            Load load = new Load(queue);
            try {
                Rates quiet = load.during(() -> {
                    sleep(3_000);
                    return null;
                });
                BulkResult[] redriven = new BulkResult[1];
                Rates redrive = load.during(() -> redriven[0] = queue.redriveAll(incident, "incident-4711"));
                assertEquals(new BulkResult(DEAD, DEAD, DEAD / 50 + 1), redriven[0], "a batch of 50 at a time, and one that finds none left");
                assertEquals(0, queue.redriveAll(incident, "incident-4711").changed(), "no dead job left to take");
                JobFilter waiting = JobFilter.builder(JobState.AVAILABLE).queue("billing").build();
                assertEquals(DEAD, queue.countMatching(waiting));

                BulkResult[] cancelled = new BulkResult[1];
                Rates cancel = load.during(() -> cancelled[0] = queue.cancelAll(waiting));
                assertEquals(new BulkResult(DEAD, DEAD, DEAD / FlexiQ.BULK_BATCH + 1), cancelled[0]);
                assertEquals(new BulkResult(0, 0, 1), queue.cancelAll(waiting), "a double submit");

                JobFilter finished = JobFilter.builder(JobState.CANCELLED).queue("billing").build();
                BulkResult[] purged = new BulkResult[1];
                Rates purge = load.during(() -> purged[0] = queue.purgeAll(finished));
                assertEquals(DEAD, purged[0].changed());
                assertEquals(0, WorkerTest.scalar("SELECT count(*) FROM " + schema + ".jobs WHERE queue = 'billing'"
                        + " AND state <> 'dead'"));
                assertEquals(JobState.DEAD, queue.getJob(old).orElseThrow().state(), "outside the time range");

                System.out.printf(Locale.ROOT, "bulk actions on %,d jobs; beside them one producer enqueues one job"
                        + " at a time and a worker (concurrency 4) runs them:%n%s%n%s%n%s%n%s%n", DEAD,
                        quiet.line("quiet, 3 s", null), redrive.line("redriveAll", redriven[0]),
                        cancel.line("cancelAll", cancelled[0]), purge.line("purgeAll", purged[0]));
                assertTrue(redrive.enqueued > 0 && redrive.done > 0, "enqueues and the worker went on");
                assertTrue(cancel.enqueued > 0 && purge.enqueued > 0, "enqueues went on");
            } finally {
                load.close();
            }
        }
    }

    @Test
    void aFilterAnActionDoesNotFitIsRefusedBeforeAnythingRuns() {
        try (FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1));
            JobFilter available = JobFilter.builder(JobState.AVAILABLE).build();
            IllegalArgumentException redrive = assertThrows(IllegalArgumentException.class,
                    () -> queue.redriveAll(available, "k"));
            assertTrue(redrive.getMessage().contains("applies to dead jobs"), redrive.getMessage());
            JobFilter dead = JobFilter.builder(JobState.DEAD).build();
            assertThrows(IllegalArgumentException.class, () -> queue.cancelAll(dead));
            assertThrows(IllegalArgumentException.class, () -> JobFilter.builder(JobState.RUNNING));
            Instant now = Instant.now();
            assertThrows(IllegalArgumentException.class,
                    () -> JobFilter.builder(JobState.DEAD).createdFrom(now).createdBefore(now).build());
            assertThrows(IllegalArgumentException.class, () -> queue.redriveAll(dead, ""));
            assertEquals(JobState.AVAILABLE, queue.getJob(id).orElseThrow().state());
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** What the producer and the worker did during one action. */
    private record Rates(double seconds, long enqueued, long done, long slowestEnqueueMicros) {
        String line(String what, BulkResult result) {
            return String.format(Locale.ROOT, "  %-11s %6.1f s%s; meanwhile %,.0f enqueues/s (slowest %.1f ms), %,.0f jobs"
                    + " run/s", what, seconds, result == null ? "" : String.format(Locale.ROOT, " (%,d changed in %,d"
                    + " statements)", result.changed(), result.batches()), enqueued / seconds,
                    slowestEnqueueMicros / 1000.0, done / seconds);
        }
    }

    /** One producer enqueueing jobs of queue "live" one at a time, and a worker running them. */
    private static final class Load {
        final AtomicLong enqueued = new AtomicLong();
        final AtomicLong done = new AtomicLong();
        final AtomicLong slowest = new AtomicLong();
        final AtomicBoolean running = new AtomicBoolean(true);
        final Thread producer;
        final Worker worker;

        Load(FlexiQ queue) {
            EnqueueOptions live = EnqueueOptions.builder().queue("live").build();
            producer = new Thread(() -> {
                while (running.get()) {
                    long start = System.nanoTime();
                    queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1), live);
                    slowest.accumulateAndGet(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start), Math::max);
                    enqueued.incrementAndGet();
                }
            });
            producer.start();
            worker = queue.worker().queues("live").concurrency(4).pollInterval(Duration.ofMillis(100))
                    .handle(CHARGE, (order, job) -> done.incrementAndGet()).build().start();
        }

        Rates during(Supplier<?> action) {
            long e = enqueued.get();
            long d = done.get();
            slowest.set(0);
            long start = System.nanoTime();
            action.get();
            double seconds = (System.nanoTime() - start) / 1e9;
            return new Rates(seconds, enqueued.get() - e, done.get() - d, slowest.get());
        }

        void close() throws InterruptedException {
            running.set(false);
            producer.join();
            worker.close();
        }
    }
}
