package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A job's attempts as a worker ran them, read back through the API. */
class AttemptHistoryTest {
    @Test
    void eachAttemptIsListedWithItsProcessTimesOutcomeAndErrorWithItsStackTrace() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(EnqueueTest.CHARGE, new EnqueueTest.Order(1, 1), EnqueueOptions.builder()
                    .retryPolicy(RetryPolicy.fixed(Duration.ZERO))
                    .build());
            AtomicInteger runs = new AtomicInteger();
            Worker worker = queue.worker().pollInterval(Duration.ofMillis(50))
                    .handle(EnqueueTest.CHARGE, (order, job) -> {
                        if (runs.incrementAndGet() < 3) {
                            throw new IllegalStateException("the card gateway refused attempt " + job.attempt());
                        }
                    }).build().start();
            try {
                WorkerTest.await("the third attempt to complete the job",
                        () -> queue.getJob(id).orElseThrow().state() == JobState.COMPLETED);
            } finally {
                worker.close();
            }
            List<AttemptInfo> attempts = queue.attempts(id);
            assertEquals(List.of("failed", "failed", "completed"), attempts.stream().map(AttemptInfo::outcome).toList());
            assertEquals(List.of(1, 2, 3), attempts.stream().map(AttemptInfo::attempt).toList());
            String process = ":" + ProcessHandle.current().pid();
            assertTrue(attempts.stream().allMatch(a -> a.worker().orElseThrow().endsWith(process)), attempts.toString());
            String first = attempts.get(0).error().orElseThrow();
            assertTrue(first.contains("the card gateway refused attempt 1"), first);
            assertTrue(first.contains("at io.flexiq.AttemptHistoryTest"), "with its stack trace: " + first);
            assertTrue(attempts.get(2).error().isEmpty());
            for (AttemptInfo a : attempts) {
                assertTrue(!a.finishedAt().orElseThrow().isBefore(a.startedAt()), a.toString());
            }
            assertTrue(queue.attempts("999999999").isEmpty());
        }
    }
}
