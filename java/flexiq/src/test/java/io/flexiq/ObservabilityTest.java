package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.flexiq.internal.observability.Listeners;
import io.flexiq.internal.worker.ClaimBuffer;
import io.flexiq.internal.worker.NativeWorkerStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/** Listeners, log lines and the MDC, against a real PostgreSQL. */
class ObservabilityTest {
    /** A payload. */
    public record Charge(int order) {}

    static final Task<Charge> CHARGE = Task.of("observed_charge", Charge.class);

    /** Records every event. */
    static final class Recorder implements FlexiQListener {
        final List<EnqueueEvent> enqueues = new CopyOnWriteArrayList<>();
        final List<JobEvent> jobs = new CopyOnWriteArrayList<>();

        @Override
        public void onEnqueue(EnqueueEvent event) {
            enqueues.add(event);
        }

        @Override
        public void onJob(JobEvent event) {
            jobs.add(event);
        }

        List<JobEvent> jobs(Predicate<JobEvent> p) {
            List<JobEvent> out = new ArrayList<>();
            jobs.stream().filter(p).forEach(out::add);
            return out;
        }
    }

    @Test
    void enqueueOutcomesReachListenersWithoutTheRawKey() throws Exception {
        Recorder recorder = new Recorder();
        try (FlexiQ queue = TestDatabase.client()) {
            queue.addListener(recorder);
            EnqueueOptions keyed = EnqueueOptions.builder().idempotencyKey("charge-order-77-secret").build();
            String id = queue.enqueue(CHARGE, new Charge(77), keyed);
            queue.enqueue(CHARGE, new Charge(77), keyed);
            assertThrows(IdempotencyConflictException.class, () -> queue.enqueue(CHARGE, new Charge(78), keyed));
            queue.enqueueMany(CHARGE, List.of(new Charge(1), new Charge(2)), EnqueueOptions.defaults());
            await(() -> recorder.enqueues.size() == 5);
            EnqueueEvent accepted = recorder.enqueues.get(0);
            assertEquals(EnqueueOutcome.ACCEPTED, accepted.outcome().orElseThrow());
            assertEquals(id, accepted.jobId().orElseThrow());
            assertEquals("observed_charge", accepted.task());
            assertEquals("default", accepted.queue());
            assertEquals("charge-…", accepted.keyPreview().orElseThrow());
            assertEquals(EnqueueTest.sha256Hex("charge-order-77-secret"), accepted.keyDigest().orElseThrow());
            assertEquals(EnqueueOutcome.REPLAYED, recorder.enqueues.get(1).outcome().orElseThrow());
            EnqueueEvent conflict = recorder.enqueues.get(2);
            assertTrue(conflict.conflict());
            assertEquals(id, conflict.jobId().orElseThrow());
            assertEquals(accepted.keyDigest(), conflict.keyDigest());
            assertFalse(recorder.enqueues.get(3).keyDigest().isPresent());
            for (EnqueueEvent e : recorder.enqueues) {
                assertFalse(e.toString().contains("order-77-secret"), e.toString());
            }
            assertTrue(queue.removeListener(recorder));
            queue.enqueue(CHARGE, new Charge(3));
            assertEquals(5, recorder.enqueues.size());
        }
    }

    @Test
    void failedAttemptsAreLoggedAndHeardAndHandlersSeeTheirJobInTheMdc() throws Exception {
        Recorder recorder = new Recorder();
        Map<String, Map<String, String>> mdcByJob = new ConcurrentHashMap<>();
        try (CapturedLogs logs = new CapturedLogs(); FlexiQ queue = TestDatabase.client()) {
            queue.addListener(recorder);
            EnqueueOptions twice = EnqueueOptions.builder().maxAttempts(2)
                    .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(200))).build();
            String failing = queue.enqueue(CHARGE, new Charge(-1), twice);
            String fine = queue.enqueue(CHARGE, new Charge(5), twice);
            Worker worker = queue.worker().handle(CHARGE, (c, job) -> {
                mdcByJob.put(job.jobId() + "/" + job.attempt(), MDC.getCopyOfContextMap());
                if (c.order() < 0) {
                    throw new IllegalStateException("card declined for order " + c.order());
                }
            }).build().start();
            await(() -> recorder.jobs(e -> e.kind() == JobEvent.Kind.DEAD_LETTERED).size() == 1
                    && recorder.jobs(e -> e.kind() == JobEvent.Kind.COMPLETED).size() == 1);
            worker.close();

            JobEvent retried = only(recorder.jobs(e -> e.kind() == JobEvent.Kind.RETRIED));
            assertEquals(failing, retried.jobId());
            assertEquals(1, retried.attempt());
            assertEquals(2, retried.maxAttempts());
            assertEquals("java.lang.IllegalStateException: card declined for order -1", retried.error().orElseThrow());
            // 200 ms spread by the policy's jitter, as this process's clock sees it.
            Duration delay = retried.retryDelay().orElseThrow();
            assertTrue(!delay.isNegative() && delay.compareTo(Duration.ofSeconds(1)) <= 0, retried.toString());
            assertTrue(retried.handlerDuration().isPresent());
            JobEvent dead = only(recorder.jobs(e -> e.kind() == JobEvent.Kind.DEAD_LETTERED));
            assertEquals(failing, dead.jobId());
            assertEquals(2, dead.attempt());
            assertFalse(dead.retryDelay().isPresent());
            JobEvent completed = only(recorder.jobs(e -> e.kind() == JobEvent.Kind.COMPLETED));
            assertEquals(fine, completed.jobId());
            assertEquals("observed_charge", completed.task());
            assertEquals("default", completed.queue());
            List<JobEvent> started = recorder.jobs(e -> e.kind() == JobEvent.Kind.STARTED);
            assertEquals(3, started.size());
            for (JobEvent s : started) {
                Duration latency = s.startLatency().orElseThrow();
                assertFalse(latency.isNegative(), s.toString());
            }

            ILoggingEvent warn = only(logs.at(Level.WARN, "job " + failing + " (task observed_charge, queue default):"
                    + " attempt 1 of 2 failed; retrying in "));
            assertTrue(warn.getFormattedMessage().endsWith("card declined for order -1"), warn.getFormattedMessage());
            ILoggingEvent error = only(logs.at(Level.ERROR, "job " + failing + " (task observed_charge, queue default)"
                    + " is dead: attempt 2 of 2 failed"));
            // The worker's lines about a job carry the MDC its handler's lines do, and the dead
            // letter carries the failure's stack trace.
            assertEquals(mdcByJob.get(failing + "/1"), warn.getMDCPropertyMap());
            assertEquals(mdcByJob.get(failing + "/2"), error.getMDCPropertyMap());
            assertEquals(IllegalStateException.class.getName(), error.getThrowableProxy().getClassName());
            assertEquals("card declined for order -1", error.getThrowableProxy().getMessage());
            assertEquals(1, logs.at(Level.INFO, worker + " started: queues [default], tasks [observed_charge],"
                    + " concurrency 10").size());
            assertEquals(1, logs.at(Level.INFO, worker + " stopped").size());

            Map<String, String> mdc = mdcByJob.get(fine + "/1");
            assertEquals(Map.of("flexiq.jobId", fine, "flexiq.task", "observed_charge", "flexiq.queue", "default",
                    "flexiq.attempt", "1"), mdc);
            assertEquals("2", mdcByJob.get(failing + "/2").get("flexiq.attempt"));
        }
    }

    @Test
    void rescuesRedrivesCancelsAndPurgesAreLoggedAndHeard() throws Exception {
        Recorder recorder = new Recorder();
        try (CapturedLogs logs = new CapturedLogs(); FlexiQ queue = TestDatabase.client()) {
            queue.addListener(recorder);
            String last = queue.enqueue(CHARGE, new Charge(1), EnqueueOptions.builder().maxAttempts(1).build());
            String again = queue.enqueue(CHARGE, new Charge(2), EnqueueOptions.builder().maxAttempts(2).build());
            String later = queue.enqueue(CHARGE, new Charge(3), EnqueueOptions.builder().delay(Duration.ofHours(1)).build());
            // A worker that claims both due jobs under a 1 ms lease and dies.
            assertEquals(2, new NativeWorkerStore(queue.handle()).claim(new String[] {"default"},
                    new String[] {CHARGE.name()}, 10, 1, 42L, new ClaimBuffer(10)));
            // Both leases pass by the server's clock, as the worker's rescue judges them.
            await(() -> WorkerTest.scalar("SELECT count(*) FROM " + queue.schema() + ".jobs WHERE lease_expires_at < now()") == 2);
            Worker worker = queue.worker().handle(CHARGE, (c, job) -> { }).build().start();
            await(() -> !recorder.jobs(e -> e.kind() == JobEvent.Kind.DEAD_LETTERED).isEmpty()
                    && recorder.jobs(e -> e.kind() == JobEvent.Kind.COMPLETED).size() == 1);
            JobEvent dead = only(recorder.jobs(e -> e.kind() == JobEvent.Kind.DEAD_LETTERED));
            assertEquals(last, dead.jobId());
            assertEquals("lease expired during attempt 1", dead.error().orElseThrow());
            JobEvent rescued = only(recorder.jobs(e -> e.kind() == JobEvent.Kind.RESCUED));
            assertEquals(again, rescued.jobId());
            assertEquals(1, rescued.attempt());
            assertEquals(again, only(recorder.jobs(e -> e.kind() == JobEvent.Kind.COMPLETED)).jobId());
            only(logs.at(Level.ERROR, "job " + last + " (task observed_charge, queue default) is dead: the lease of"
                    + " attempt 1 of 1 passed"));
            only(logs.at(Level.WARN, "job " + again + " (task observed_charge, queue default): the lease of attempt 1"
                    + " of 2 passed"));

            assertEquals(RedriveOutcome.REDRIVEN, queue.redrive(last, "redrive-" + last).outcome());
            assertEquals(RedriveOutcome.REPLAYED, queue.redrive(last, "redrive-" + last).outcome());
            await(() -> recorder.jobs(e -> e.kind() == JobEvent.Kind.COMPLETED).size() == 2);
            assertEquals(last, only(recorder.jobs(e -> e.kind() == JobEvent.Kind.REDRIVEN)).jobId());
            worker.close();

            assertTrue(queue.cancel(later));
            assertTrue(queue.purge(later));
            assertFalse(queue.purge(later));
            await(() -> recorder.jobs(e -> e.kind() == JobEvent.Kind.PURGED).size() == 1);
            JobEvent cancelled = only(recorder.jobs(e -> e.kind() == JobEvent.Kind.CANCELLED));
            assertEquals(later, cancelled.jobId());
            assertEquals("observed_charge", cancelled.task());
            assertEquals(later, only(recorder.jobs(e -> e.kind() == JobEvent.Kind.PURGED)).jobId());
        }
    }

    @Test
    void aStuckOrThrowingListenerNeitherStallsAWorkerNorLosesOthersTheirEvents() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Recorder recorder = new Recorder();
        FlexiQListener stuck = new FlexiQListener() {
            @Override
            public void onEnqueue(EnqueueEvent event) {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }

            @Override
            public String toString() {
                return "stuck-listener";
            }
        };
        FlexiQListener throwing = new FlexiQListener() {
            @Override
            public void onJob(JobEvent event) {
                throw new IllegalStateException("listener bug");
            }
        };
        try (CapturedLogs logs = new CapturedLogs();
                FlexiQ queue = FlexiQ.builder(TestDatabase.url()).schema(TestDatabase.freshSchema()).migrate(true).listener(stuck).listener(throwing)
                        .listener(recorder).build()) {
            // More enqueue events than the stuck listener may hold waiting: the rest are dropped.
            int jobs = Listeners.BACKLOG + 100;
            CountDownLatch handled = new CountDownLatch(jobs);
            List<Charge> charges = new ArrayList<>();
            for (int i = 0; i < jobs; i++) {
                charges.add(new Charge(i));
            }
            // In chunks the recorder drains between, so that on a loaded machine only the stuck one overflows.
            for (int from = 0; from < jobs; from += 1_000) {
                int to = Math.min(jobs, from + 1_000);
                queue.enqueueMany(CHARGE, charges.subList(from, to), EnqueueOptions.defaults());
                await(() -> recorder.enqueues.size() == to);
            }
            assertEquals(1, logs.at(Level.WARN, "listener stuck-listener falls behind: 1 events were dropped since the last report").size(),
                    logs.at(Level.WARN, "falls behind").toString());
            Worker worker = queue.worker().handle(CHARGE, (c, job) -> handled.countDown()).build().start();
            assertTrue(handled.await(120, TimeUnit.SECONDS), "the worker stalled behind its listeners");
            await(() -> recorder.jobs(e -> e.kind() == JobEvent.Kind.COMPLETED).size() == jobs);
            worker.close();
            assertEquals(1, logs.at(Level.WARN, "threw (1 times since the last report); its events go on").size());
            release.countDown();
        }
    }

    @Test
    void theLogSaysWhereTheClientConnectedWithoutItsSecrets() {
        assertEquals("postgres://db.example:5433/app",
                FlexiQ.Builder.redacted("postgres://app:s3cr@t/x@db.example:5433/app?sslmode=require&password=p"));
        assertEquals("postgres://localhost/app", FlexiQ.Builder.redacted("postgres://localhost/app"));
        try (CapturedLogs logs = new CapturedLogs(); FlexiQ queue = TestDatabase.client()) {
            assertEquals(1, logs.at(Level.INFO, "(schema " + queue.schema()).size(), logs.matching(e -> true).toString());
        }
    }

    private static <T> T only(List<T> list) {
        assertEquals(1, list.size(), list.toString());
        return list.get(0);
    }

    private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting");
            Thread.sleep(10);
        }
    }
}
