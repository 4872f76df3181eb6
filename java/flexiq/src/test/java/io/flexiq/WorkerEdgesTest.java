package io.flexiq;

import static io.flexiq.WorkerTest.await;
import static io.flexiq.WorkerTest.job;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Timeouts, overlapping attempts, odd errors and the lifecycle of workers and their client. */
public class WorkerEdgesTest {
    static final Task<EnqueueTest.Order> CHARGE = EnqueueTest.CHARGE;

    /** Waits for {@code latch}, ignoring interrupts, as a badly behaved handler does. */
    public static void awaitIgnoringInterrupts(CountDownLatch latch) {
        while (true) {
            try {
                latch.await();
                return;
            } catch (InterruptedException ignored) {
                // Deliberately ignored.
            }
        }
    }

    @Test
    void anAttemptNeverStartsWhileAnEarlierAttemptsThreadStillRuns() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1), EnqueueOptions.builder()
                    .timeout(Duration.ofMillis(500)).maxAttempts(3)
                    .retryPolicy(RetryPolicy.exponential(Duration.ofMillis(100), Duration.ofMillis(100))).build());
            AtomicInteger running = new AtomicInteger();
            AtomicInteger mostAtOnce = new AtomicInteger();
            ConcurrentLinkedQueue<Integer> attempts = new ConcurrentLinkedQueue<>();
            // Each attempt's handler outlives its timeout, ignoring the interrupt, until released.
            Map<Integer, CountDownLatch> release = Map.of(1, new CountDownLatch(1), 2, new CountDownLatch(1),
                    3, new CountDownLatch(1));
            WorkerProbe probe = WorkerProbe.of(queue);
            WorkerTest.running(queue.worker()
                    .handle(CHARGE, (order, job) -> {
                        mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
                        attempts.add(job.attempt());
                        try {
                            awaitIgnoringInterrupts(release.get(job.attempt()));
                        } finally {
                            running.decrementAndGet();
                        }
                    })
                    .concurrency(4)
                    .pollInterval(Duration.ofMillis(20)), probe, () -> {
                try {
                    for (int attempt = 2; attempt <= 3; attempt++) {
                        int next = attempt;
                        // The attempt before times out, fails, and this one is claimed while the
                        // earlier one's thread still runs.
                        await("attempt " + next + " to be claimed", () -> {
                            JobInfo info = job(queue, id);
                            return info.attempt() == next && info.state() == JobState.RUNNING;
                        });
                        // Five more polls of the claimer, the claimed attempt free to start all along.
                        probe.awaitWaits(probe.waits(), 5);
                        assertEquals(next - 1, attempts.size(), "attempt " + next
                                + " started while an earlier attempt's thread ran: " + attempts);
                        release.get(next - 1).countDown();
                        await("attempt " + next + " to start", () -> attempts.size() == next);
                    }
                    await("the job to be dead-lettered", () -> job(queue, id).state() == JobState.DEAD);
                } finally {
                    release.values().forEach(CountDownLatch::countDown);
                }
                await("the last attempt's thread to end", () -> attempts.size() == 3 && running.get() == 0);
            });
            assertEquals(1, mostAtOnce.get(), "attempts of one job ran at once");
            assertEquals(List.of(1, 2, 3), List.copyOf(attempts));
        }
    }

    @Test
    void aTimeoutFiresWhilePostgresBlocksTheWorkersLeaseExtension() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1), EnqueueOptions.builder()
                    .timeout(Duration.ofSeconds(1)).maxAttempts(1).build());
            CountDownLatch started = new CountDownLatch(1);
            AtomicLong interruptedAt = new AtomicLong();
            AtomicLong lockTakenAt = new AtomicLong();
            AtomicLong lockReleasedAt = new AtomicLong();
            // Released only once the test is done: the handler runs until it is interrupted.
            CountDownLatch release = new CountDownLatch(1);
            WorkerTest.running(queue.worker()
                    .handle(CHARGE, (order, job) -> {
                        started.countDown();
                        try {
                            release.await();
                        } catch (InterruptedException e) {
                            interruptedAt.set(System.nanoTime());
                        }
                    })
                    // Extended every 3.3 s, so the first extension waits on the lock; the lease
                    // outlasts the lock, so only the timeout can end the attempt.
                    .lease(Duration.ofSeconds(10)), () -> {
                assertTrue(started.await(30, TimeUnit.SECONDS));
                try (Connection c = DriverManager.getConnection(TestDatabase.jdbcUrl())) {
                    c.setAutoCommit(false);
                    try (Statement s = c.createStatement()) {
                        s.execute("LOCK TABLE " + queue.schema() + ".jobs IN ACCESS EXCLUSIVE MODE");
                    }
                    lockTakenAt.set(System.nanoTime());
                    // Held until the handler was interrupted and the worker's statements wait
                    // for the table: the failure it records, and the lease extension due next.
                    await("the handler to be interrupted", () -> interruptedAt.get() != 0);
                    await("a statement of the worker to wait for the lock", () -> lockWaiters(queue) > 0);
                    lockReleasedAt.set(System.nanoTime());
                    c.commit();
                } finally {
                    release.countDown();
                }
                await("the timed-out attempt to be recorded", () -> job(queue, id).state() == JobState.DEAD);
            });
            assertTrue(interruptedAt.get() != 0, "the handler was interrupted");
            assertTrue(lockTakenAt.get() < interruptedAt.get() && interruptedAt.get() < lockReleasedAt.get(),
                    "the timeout fired while the table was locked");
            assertEquals("timed out after 1000 ms", job(queue, id).lastError().orElseThrow());
        }
    }

    @Test
    void anErrorWithNulCharactersOrOfAnyLengthIsRecordedAndTheJobMovesOn() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            EnqueueOptions once = EnqueueOptions.builder().maxAttempts(1).build();
            String nul = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1), once);
            String huge = queue.enqueue(CHARGE, new EnqueueTest.Order(2, 2), once);
            WorkerTest.running(queue.worker()
                    .handle(CHARGE, (order, job) -> {
                        throw new IllegalStateException(order.customerId() == 1 ? "bad\u0000byte" : "x".repeat(100_000));
                    })
                    .pollInterval(Duration.ofMillis(20)), () -> {
                await("both to be dead-lettered", () -> job(queue, nul).state() == JobState.DEAD
                        && job(queue, huge).state() == JobState.DEAD);
            });
            assertEquals("java.lang.IllegalStateException: bad\\0byte",
                    job(queue, nul).lastError().orElseThrow().lines().findFirst().orElseThrow());
            String stored = job(queue, huge).lastError().orElseThrow();
            assertTrue(stored.length() < 9_000, "bounded: " + stored.length());
            assertTrue(stored.endsWith("more bytes cut)"), stored.substring(stored.length() - 40));
        }
    }

    /** Statements waiting for a lock on the client's jobs table. */
    static long lockWaiters(FlexiQ queue) {
        return WorkerTest.scalar("SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = to_regclass('"
                + queue.schema() + ".jobs')");
    }

    /** The live threads of the worker whose threads carry this name prefix. */
    static Set<String> threadsOf(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix + "-"))
                .map(Thread::getName).collect(Collectors.toSet());
    }

    @Test
    void closingTheClientFirstClosesItsWorkersWithoutLeakingThreads() throws Exception {
        FlexiQ queue = TestDatabase.client();
        String id = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1));
        CountDownLatch ran = new CountDownLatch(1);
        Worker started = queue.worker().handle(CHARGE, (order, job) -> ran.countDown()).build().start();
        Worker neverStarted = queue.worker().handle(CHARGE, (order, job) -> {}).build();
        assertTrue(ran.await(30, TimeUnit.SECONDS));
        assertFalse(threadsOf(started.toString()).isEmpty(), "the started worker has threads");
        queue.close();
        await("the worker's threads to end", () -> threadsOf(started.toString()).isEmpty());
        started.close();
        neverStarted.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, neverStarted::start);
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertEquals(Set.of(), threadsOf(neverStarted.toString()));
        try (FlexiQ reader = FlexiQ.builder(TestDatabase.url()).schema(queue.schema()).build()) {
            assertEquals(JobState.COMPLETED, job(reader, id).state(), "the finished job was recorded before closing");
        }
    }

    @Test
    void aWorkerClosedBeforeItStartedRefusesToStart() {
        try (FlexiQ queue = TestDatabase.client()) {
            Worker worker = queue.worker().handle(CHARGE, (order, job) -> {}).build();
            worker.close();
            worker.close();
            IllegalStateException e = assertThrows(IllegalStateException.class, worker::start);
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
        }
    }

    @Test
    void closingAWorkerFromItsOwnHandlerReturnsAtOnceAndTheJobCompletesOnce() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1));
            AtomicInteger runs = new AtomicInteger();
            AtomicLong closeTookNanos = new AtomicLong(-1);
            Worker[] self = new Worker[1];
            self[0] = queue.worker()
                    .handle(CHARGE, (order, job) -> {
                        runs.incrementAndGet();
                        long before = System.nanoTime();
                        self[0].close();
                        closeTookNanos.set(System.nanoTime() - before);
                    })
                    .shutdownTimeout(Duration.ofSeconds(20))
                    .build();
            self[0].start();
            await("the job to complete", () -> job(queue, id).state() == JobState.COMPLETED);
            await("the worker's threads to end", () -> threadsOf(self[0].toString()).isEmpty());
            assertEquals(1, runs.get(), "the job ran once");
            assertTrue(closeTookNanos.get() >= 0 && closeTookNanos.get() < TimeUnit.SECONDS.toNanos(10),
                    "close() inside the handler waited for the shutdown timeout: " + closeTookNanos.get() + " ns");
        }
    }
}
