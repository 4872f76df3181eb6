package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.flexiq.internal.worker.WorkerStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Workers through the real native library and a real PostgreSQL. */
public class WorkerTest {
    static final Task<EnqueueTest.Order> CHARGE = EnqueueTest.CHARGE;
    static final RetryPolicy FAST_RETRY = RetryPolicy.exponential(Duration.ofMillis(20), Duration.ofMillis(50));

    public static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(10);
        }
    }

    /** Runs a query returning one number as the superuser, failing the test on an error. */
    static long scalar(String sql) {
        try {
            return TestDatabase.scalar(sql);
        } catch (java.sql.SQLException e) {
            throw new AssertionError(sql, e);
        }
    }

    interface Body {
        void run() throws Exception;
    }

    /** Runs {@code body} while a worker built from {@code builder} runs, then closes it. */
    static void running(Worker.Builder builder, Body body) throws Exception {
        running(builder.build(), body);
    }

    /** As above, the worker calling PostgreSQL through {@code store} (a {@link WorkerProbe}, say). */
    static void running(Worker.Builder builder, WorkerStore store, Body body) throws Exception {
        running(builder.build(store), body);
    }

    private static void running(Worker built, Body body) throws Exception {
        Worker worker = built.start();
        try {
            body.run();
        } finally {
            worker.close();
        }
    }

    static JobInfo job(FlexiQ queue, String id) {
        return queue.getJob(id).orElseThrow();
    }

    @Test
    void runsJobsOfItsQueuesAndTasksWithTheirContextAndCompletesThem() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            String keyed = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 100),
                    EnqueueOptions.builder().uniqueKey("order-1").maxAttempts(4).build());
            String elsewhere = queue.enqueue(CHARGE, new EnqueueTest.Order(2, 200),
                    EnqueueOptions.builder().queue("other").build());
            String otherTask = queue.enqueue(Task.of("other_task", EnqueueTest.Order.class), new EnqueueTest.Order(3, 3));
            ConcurrentLinkedQueue<String> seen = new ConcurrentLinkedQueue<>();
            running(queue.worker()
                    .handle(CHARGE, (order, job) -> seen.add(job.jobId() + " " + job.attempt() + "/"
                            + job.maxAttempts() + " " + job.queue() + " " + job.task() + " " + order.amountCents())), () -> {
                await("the job to complete", () -> job(queue, keyed).state() == JobState.COMPLETED);
            });
            assertEquals(List.of(keyed + " 1/4 default charge_customer 100"), List.copyOf(seen));
            assertEquals(JobState.AVAILABLE, job(queue, elsewhere).state(), "other queue untouched");
            assertEquals(JobState.AVAILABLE, job(queue, otherTask).state(), "other task untouched");
            assertFalse(job(queue, keyed).keyHeld(), "completion released the key");
        }
    }

    @Test
    void aFailingHandlerIsRetriedWithBackoffThenDeadLetteredWithItsLastError() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1), EnqueueOptions.builder()
                    .uniqueKey("doomed").maxAttempts(3).retryPolicy(FAST_RETRY).build());
            AtomicInteger calls = new AtomicInteger();
            running(queue.worker()
                    .handle(CHARGE, (order, job) -> {
                        calls.incrementAndGet();
                        throw new IllegalStateException("card declined on attempt " + job.attempt());
                    })
                    .pollInterval(Duration.ofMillis(20)), () -> {
                await("the job to be dead-lettered", () -> job(queue, id).state() == JobState.DEAD);
            });
            JobInfo dead = job(queue, id);
            assertEquals(3, calls.get());
            assertEquals(3, dead.attempt());
            assertEquals("java.lang.IllegalStateException: card declined on attempt 3",
                    dead.lastError().orElseThrow().lines().findFirst().orElseThrow());
            assertTrue(dead.lastError().orElseThrow().contains("\tat io.flexiq."), "with its stack trace");
            assertFalse(dead.keyHeld(), "dead-lettering released the key");
        }
    }

    @Test
    void aHandlerRunningLongerThanItsLeaseKeepsTheJobWhileItRuns() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1));
            AtomicInteger runs = new AtomicInteger();
            CountDownLatch release = new CountDownLatch(1);
            JobHandler<EnqueueTest.Order> slow = (order, job) -> {
                runs.incrementAndGet();
                release.await();
            };
            // Two workers with short leases: either puts back any job whose lease passes, the
            // other worker's included, at every poll. The probe counts both workers' passes.
            WorkerProbe probe = WorkerProbe.of(queue);
            Worker other = queue.worker().handle(CHARGE, slow).lease(Duration.ofMillis(600))
                    .pollInterval(Duration.ofMillis(50)).build(probe).start();
            try {
                running(queue.worker().handle(CHARGE, slow).lease(Duration.ofMillis(600))
                        .pollInterval(Duration.ofMillis(50)), probe, () -> {
                    await("the handler to start", () -> runs.get() == 1);
                    // Held past the lease it was claimed under, by the server's clock, and two
                    // rescue passes after that: without an extension the job would be back.
                    await("the first lease to pass", () -> scalar("SELECT count(*) FROM " + queue.schema()
                            + ".jobs WHERE id = " + id + " AND started_at + interval '600 milliseconds' < now()") == 1);
                    probe.awaitRescues(probe.rescues(), 2);
                    JobInfo held = job(queue, id);
                    assertEquals(JobState.RUNNING, held.state(), "still held by its first attempt");
                    assertEquals(1, held.attempt());
                    release.countDown();
                    await("the job to complete", () -> job(queue, id).state() == JobState.COMPLETED);
                });
            } finally {
                release.countDown();
                other.close();
            }
            assertEquals(1, runs.get(), "the lease was extended while the handler ran");
            assertEquals(1, job(queue, id).attempt());
        }
    }

    @Test
    void aHandlerRunningPastItsTimeoutFailsTheAttempt() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1), EnqueueOptions.builder()
                    .timeout(Duration.ofMillis(200)).maxAttempts(1).build());
            CountDownLatch interrupted = new CountDownLatch(1);
            // Released only once the test is done: the handler runs until it is interrupted.
            CountDownLatch release = new CountDownLatch(1);
            running(queue.worker()
                    .handle(CHARGE, (order, job) -> {
                        try {
                            release.await();
                        } catch (InterruptedException e) {
                            interrupted.countDown();
                        }
                    }), () -> {
                try {
                    await("the job to time out", () -> job(queue, id).state() == JobState.DEAD);
                    assertTrue(interrupted.await(10, TimeUnit.SECONDS), "the handler was interrupted");
                } finally {
                    release.countDown();
                }
            });
            assertEquals(Optional.of("timed out after 200 ms"), job(queue, id).lastError());
        }
    }

    @Test
    void closingGivesUnfinishedAndWaitingJobsBackWithoutCountingTheirAttempt() throws Exception {
        ObservabilityTest.Recorder recorder = new ObservabilityTest.Recorder();
        try (CapturedLogs logs = new CapturedLogs(); FlexiQ queue = TestDatabase.client()) {
            queue.addListener(recorder);
            List<String> ids = queue.enqueueMany(CHARGE, List.of(new EnqueueTest.Order(1, 1),
                    new EnqueueTest.Order(2, 2), new EnqueueTest.Order(3, 3)), EnqueueOptions.defaults());
            CountDownLatch started = new CountDownLatch(1);
            // Never released before closing: the running handler is interrupted by the close.
            CountDownLatch release = new CountDownLatch(1);
            AtomicInteger runs = new AtomicInteger();
            Worker worker = queue.worker()
                    .handle(CHARGE, (order, job) -> {
                        runs.incrementAndGet();
                        started.countDown();
                        release.await();
                    })
                    .concurrency(1)
                    .prefetch(2)
                    .shutdownTimeout(Duration.ofMillis(200))
                    .build()
                    .start();
            assertTrue(started.await(30, TimeUnit.SECONDS));
            await("all three to be claimed", () -> ids.stream().allMatch(id -> job(queue, id).state() == JobState.RUNNING));
            worker.close();
            release.countDown();
            assertEquals(1, runs.get(), "one thread, one handler started");
            for (String id : ids) {
                JobInfo back = job(queue, id);
                assertEquals(JobState.AVAILABLE, back.state(), "job " + id);
                assertEquals(0, back.attempt(), "job " + id);
            }
            // Each job given back is logged, under its job's MDC, and heard.
            List<ILoggingEvent> lines = logs.at(Level.INFO, "was given back unfinished as the worker closed");
            assertEquals(Set.copyOf(ids), lines.stream().map(e -> e.getMDCPropertyMap().get("flexiq.jobId"))
                    .collect(Collectors.toSet()), lines.toString());
            await("the give-backs to be heard",
                    () -> recorder.jobs(e -> e.kind() == JobEvent.Kind.GIVEN_BACK).size() == ids.size());
            assertEquals(Set.copyOf(ids), recorder.jobs(e -> e.kind() == JobEvent.Kind.GIVEN_BACK).stream()
                    .map(JobEvent::jobId).collect(Collectors.toSet()));
        }
    }

    @Test
    void aRetriedJobSkipsTheStageItsCheckpointRecorded() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(7, 700),
                    EnqueueOptions.builder().retryPolicy(FAST_RETRY).build());
            AtomicInteger charges = new AtomicInteger();
            ConcurrentLinkedQueue<String> receipts = new ConcurrentLinkedQueue<>();
            running(queue.worker()
                    .handle(CHARGE, (order, job) -> {
                        String chargeId = job.checkpoint("charge", String.class,
                                () -> "ch_" + charges.incrementAndGet());
                        if (job.attempt() == 1) {
                            throw new IllegalStateException("receipt service down");
                        }
                        receipts.add(chargeId + " on attempt " + job.attempt());
                    })
                    .pollInterval(Duration.ofMillis(20)), () -> {
                await("the job to complete", () -> job(queue, id).state() == JobState.COMPLETED);
            });
            assertEquals(1, charges.get(), "the charge stage ran once");
            assertEquals(List.of("ch_1 on attempt 2"), List.copyOf(receipts));
        }
    }

    @Test
    void aRedriveRunsADeadJobAgainOncePerRedriveKey() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1),
                    EnqueueOptions.builder().uniqueKey("order-9").maxAttempts(1).build());
            AtomicInteger runs = new AtomicInteger();
            running(queue.worker()
                    .handle(CHARGE, (order, job) -> {
                        if (runs.incrementAndGet() == 1) {
                            throw new IllegalStateException("first run fails");
                        }
                    })
                    .pollInterval(Duration.ofMillis(20)), () -> {
                await("the job to die", () -> job(queue, id).state() == JobState.DEAD);
                assertEquals(new RedriveResult(RedriveOutcome.REDRIVEN, Optional.empty()),
                        queue.redrive(id, "redrive-req-1"));
                await("the redriven job to complete", () -> job(queue, id).state() == JobState.COMPLETED);
                assertEquals(RedriveOutcome.REPLAYED, queue.redrive(id, "redrive-req-1").outcome());
            });
            assertEquals(2, runs.get());
            assertEquals(RedriveOutcome.NOT_DEAD, queue.redrive(id, "redrive-req-2").outcome());
            assertThrows(IllegalArgumentException.class, () -> queue.redrive(id, ""));
        }
    }

    @Test
    void aRedriveLeavesTheDeadJobAloneWhileANewerJobHoldsItsKey() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            EnqueueOptions keyed = EnqueueOptions.builder().uniqueKey("order-10").maxAttempts(1).build();
            String dead = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1), keyed);
            running(queue.worker()
                    .handle(CHARGE, (order, job) -> {
                        throw new IllegalStateException("fails");
                    })
                    .pollInterval(Duration.ofMillis(20)), () -> {
                await("the job to die", () -> job(queue, dead).state() == JobState.DEAD);
            });
            String newer = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1), keyed);
            assertEquals(new RedriveResult(RedriveOutcome.KEY_HELD, Optional.of(newer)),
                    queue.redrive(dead, "redrive-10"));
            assertEquals(JobState.DEAD, job(queue, dead).state());
        }
    }

    @Test
    void anIdleWorkerWakesOnANewJobWithoutWaitingForItsPoll() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            CountDownLatch ran = new CountDownLatch(1);
            WorkerProbe probe = WorkerProbe.of(queue);
            running(queue.worker()
                    .handle(CHARGE, (order, job) -> ran.countDown())
                    .pollInterval(Duration.ofMinutes(5)), probe, () -> {
                // Idle, listening: only the new job's announcement makes it look before its poll.
                probe.awaitIdle();
                queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1));
                assertTrue(ran.await(20, TimeUnit.SECONDS), "woken by PostgreSQL's notification");
            });
        }
    }

    @Test
    void aWorkerNeedsAHandlerAndRefusesTwoForOneTask() {
        try (FlexiQ queue = TestDatabase.client()) {
            assertThrows(IllegalStateException.class, () -> queue.worker().build());
            Worker.Builder builder = queue.worker().handle(CHARGE, (order, job) -> {});
            assertThrows(IllegalArgumentException.class, () -> builder.handle(CHARGE, (order, job) -> {}));
            assertThrows(IllegalArgumentException.class, () -> builder.concurrency(0));
        }
    }
}
