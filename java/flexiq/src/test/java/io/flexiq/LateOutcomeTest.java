package io.flexiq;

import static io.flexiq.WorkerTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.flexiq.internal.worker.ForwardingStore;
import io.flexiq.internal.worker.NativeWorkerStore;
import io.flexiq.internal.worker.WorkerStore;
import io.flexiq.micrometer.FlexiQMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A handler's outcome that reaches PostgreSQL after its lease passed and a rescue moved the job:
 * recorded while no later attempt started, refused once one has. The worker's lease keeper is
 * held back (its extensions never reach PostgreSQL), as on a host too busy to run it in time.
 */
class LateOutcomeTest {
    static final Task<EnqueueTest.Order> CHARGE = EnqueueTest.CHARGE;
    static final Duration LEASE = Duration.ofMillis(300);

    /** A worker store whose lease extensions claim success without reaching PostgreSQL. */
    static WorkerStore leasesHeldBack(FlexiQ queue) {
        return new ForwardingStore(new NativeWorkerStore(queue.handle())) {
            @Override
            public long[] extendLeases(long[] ids, int[] attempts, long leaseMillis) {
                return ids;
            }
        };
    }

    @Test
    void aCompletionAfterItsLastAttemptWasDeadLetteredByARescueIsRecorded() throws Exception {
        ObservabilityTest.Recorder recorder = new ObservabilityTest.Recorder();
        MeterRegistry registry = new SimpleMeterRegistry();
        try (CapturedLogs logs = new CapturedLogs(); FlexiQ queue = TestDatabase.client();
                FlexiQMetrics metrics = new FlexiQMetrics(queue)) {
            queue.addListener(recorder);
            metrics.bindTo(registry);
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 100),
                    EnqueueOptions.builder().maxAttempts(1).build());
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch rescued = new CountDownLatch(1);
            Worker worker = queue.worker()
                    .handle(CHARGE, (order, job) -> {
                        started.countDown();
                        rescued.await();
                    })
                    .lease(LEASE)
                    .build(leasesHeldBack(queue))
                    .start();
            try {
                assertTrue(started.await(30, TimeUnit.SECONDS));
                // The lease passes while the handler runs; a rescue (the worker's own, or this
                // one) dead-letters the job, its only attempt spent.
                await("the job to be dead-lettered by a rescue", () -> {
                    new NativeWorkerStore(queue.handle()).rescueExpired();
                    return WorkerTest.job(queue, id).state() == JobState.DEAD;
                });
                rescued.countDown();
                await("the job to complete", () -> WorkerTest.job(queue, id).state() == JobState.COMPLETED);
            } finally {
                worker.close();
            }
            JobInfo done = WorkerTest.job(queue, id);
            assertEquals(1, done.attempt(), "the rescue does not count as an attempt");
            List<ILoggingEvent> lines = logs.at(Level.WARN, "attempt 1 of job " + id
                    + " succeeded after its lease had passed and a rescue had moved the job; recorded all the same");
            assertEquals(1, lines.size(), lines.toString());
            assertEquals(id, lines.get(0).getMDCPropertyMap().get("flexiq.jobId"));
            await("the events", () -> !recorder.jobs(e -> e.kind() == JobEvent.Kind.COMPLETED).isEmpty());
            assertEquals(List.of(JobEvent.Kind.RECORDED_LATE, JobEvent.Kind.COMPLETED),
                    recorder.jobs(e -> e.jobId().equals(id) && (e.kind() == JobEvent.Kind.RECORDED_LATE
                            || e.kind() == JobEvent.Kind.COMPLETED)).stream().map(JobEvent::kind).toList());
            await("the counter", () -> registry.find("flexiq.late.outcomes").counter() != null
                    && registry.find("flexiq.late.outcomes").counter().count() == 1.0);
        }
    }

    @Test
    void aLateCompletionAfterAnotherAttemptStartedIsRefusedAndThatAttemptDecides() throws Exception {
        try (CapturedLogs logs = new CapturedLogs(); FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(CHARGE, new EnqueueTest.Order(2, 200),
                    EnqueueOptions.builder().maxAttempts(2).build());
            CountDownLatch firstStarted = new CountDownLatch(1);
            CountDownLatch secondFailed = new CountDownLatch(1);
            JobHandler<EnqueueTest.Order> handler = (order, job) -> {
                if (job.attempt() == 1) {
                    firstStarted.countDown();
                    secondFailed.await();
                    return;
                }
                secondFailed.countDown();
                throw new IllegalStateException("attempt " + job.attempt() + " failed");
            };
            // The first worker holds attempt 1 and takes nothing else.
            Worker first = queue.worker().handle(CHARGE, handler).concurrency(1).prefetch(0).lease(LEASE)
                    .build(leasesHeldBack(queue)).start();
            try {
                assertTrue(firstStarted.await(30, TimeUnit.SECONDS));
                // Once attempt 1's lease passes, a rescue puts the job back, and a second worker
                // runs attempt 2, which fails for good.
                Worker second = queue.worker().handle(CHARGE, handler).pollInterval(Duration.ofMillis(50))
                        .build().start();
                try {
                    assertTrue(secondFailed.await(30, TimeUnit.SECONDS));
                    await("attempt 2's failure to be recorded",
                            () -> WorkerTest.job(queue, id).state() == JobState.DEAD);
                } finally {
                    second.close();
                }
                await("attempt 1's completion to be refused", () -> !logs.at(Level.WARN, "attempt 1 of job " + id
                        + " succeeded, but the outcome was not recorded").isEmpty());
            } finally {
                first.close();
            }
            JobInfo dead = WorkerTest.job(queue, id);
            assertEquals(JobState.DEAD, dead.state(), "attempt 2 decides");
            assertEquals(2, dead.attempt());
            assertEquals("java.lang.IllegalStateException: attempt 2 failed",
                    dead.lastError().orElseThrow().lines().findFirst().orElseThrow());
        }
    }
}
