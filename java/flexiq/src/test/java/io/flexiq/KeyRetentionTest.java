package io.flexiq;

import static io.flexiq.WorkerTest.await;
import static io.flexiq.WorkerTest.job;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.EnqueueTest.Order;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * How long a key's binding lasts, by the kind of key: an idempotencyKey for 24 hours from
 * acceptance, a uniqueKey / jobId and a derived key while the job is active; the call's
 * keyRetention overrides both, the client's default applies to explicit keys. Each PostgreSQL
 * test lets a real worker finish the first job before enqueueing the same request again.
 */
class KeyRetentionTest {
    static final Task<Order> CHARGE = EnqueueTest.CHARGE;
    private static final Order ORDER = new Order(7, 700);
    private static final Duration HOUR = Duration.ofHours(1);

    /** The first enqueue, and the same enqueue again once a worker has completed the first job. */
    private record Twice(EnqueueResult first, EnqueueResult again) {}

    private static Twice againAfterCompletion(FlexiQ queue, EnqueueOptions options) throws Exception {
        EnqueueResult[] results = new EnqueueResult[2];
        WorkerTest.running(queue.worker().handle(CHARGE, (order, job) -> {}), () -> {
            results[0] = queue.enqueueWithResult(CHARGE, ORDER, options);
            await("the first job to complete", () -> job(queue, results[0].jobId()).state() == JobState.COMPLETED);
            results[1] = queue.enqueueWithResult(CHARGE, ORDER, options);
        });
        assertEquals(EnqueueOutcome.ACCEPTED, results[0].outcome());
        return new Twice(results[0], results[1]);
    }

    private static void assertReplayed(FlexiQ queue, Twice twice) {
        assertEquals(EnqueueOutcome.REPLAYED, twice.again().outcome());
        assertEquals(twice.first().jobId(), twice.again().jobId());
        JobInfo first = job(queue, twice.first().jobId());
        assertEquals(JobState.COMPLETED, first.state());
        assertTrue(first.keyHeld(), "the finished job still holds its key");
    }

    private static void assertAcceptedAnew(FlexiQ queue, Twice twice) {
        assertEquals(EnqueueOutcome.ACCEPTED, twice.again().outcome());
        assertNotEquals(twice.first().jobId(), twice.again().jobId());
        assertFalse(job(queue, twice.first().jobId()).keyHeld(), "completion released the key");
    }

    private static FlexiQ clientWithKeyRetention(Duration retention) {
        return FlexiQ.builder(TestDatabase.url()).schema(TestDatabase.freshSchema()).poolSize(4).migrate(true)
                .keyRetention(retention).build();
    }

    @Test
    void anIdempotencyKeyReplaysTheFinishedJob() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            assertReplayed(queue, againAfterCompletion(queue,
                    EnqueueOptions.builder().idempotencyKey("order-7:place").build()));
        }
    }

    @Test
    void anIdempotencyKeyReplaysTheFinishedJobInABatch() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            List<EnqueueRequest<Order>> batch = List.of(
                    EnqueueRequest.of(CHARGE, ORDER, EnqueueOptions.builder().idempotencyKey("hook-1").build()),
                    EnqueueRequest.of(CHARGE, new Order(8, 800)));
            List<List<EnqueueResult>> results = new ArrayList<>();
            WorkerTest.running(queue.worker().handle(CHARGE, (order, job) -> {}), () -> {
                results.add(queue.enqueueManyWithResults(batch));
                await("the batch's jobs to complete", () -> results.get(0).stream()
                        .allMatch(r -> job(queue, r.jobId()).state() == JobState.COMPLETED));
                results.add(queue.enqueueManyWithResults(batch));
            });
            assertEquals(results.get(0).get(0).jobId(), results.get(1).get(0).jobId(), "the finished job's id");
            assertEquals(List.of(EnqueueOutcome.REPLAYED, EnqueueOutcome.ACCEPTED),
                    results.get(1).stream().map(EnqueueResult::outcome).toList());
        }
    }

    @Test
    void aUniqueKeyOrJobIdFreesWhenTheJobFinishes() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            assertAcceptedAnew(queue, againAfterCompletion(queue, EnqueueOptions.builder().uniqueKey("u-7").build()));
            assertAcceptedAnew(queue, againAfterCompletion(queue, EnqueueOptions.builder().jobId("j-7").build()));
        }
    }

    @Test
    void aUniqueKeyWinsOverAnIdempotencyKeyRetentionIncluded() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            assertAcceptedAnew(queue, againAfterCompletion(queue,
                    EnqueueOptions.builder().idempotencyKey("i-7").uniqueKey("u-7").build()));
        }
    }

    @Test
    void aDerivedKeyFreesWhenTheJobFinishes() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            assertAcceptedAnew(queue, againAfterCompletion(queue, EnqueueOptions.builder().idempotent(true).build()));
        }
    }

    @Test
    void theCallsRetentionOfZeroFreesAnIdempotencyKeyWhenTheJobFinishes() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            assertAcceptedAnew(queue, againAfterCompletion(queue,
                    EnqueueOptions.builder().idempotencyKey("order-7:place").keyRetention(Duration.ZERO).build()));
        }
    }

    @Test
    void theCallsRetentionKeepsAUniqueKeyBound() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            assertReplayed(queue, againAfterCompletion(queue,
                    EnqueueOptions.builder().uniqueKey("u-7").keyRetention(HOUR).build()));
        }
    }

    @Test
    void theClientsDefaultKeepsExplicitKeysBoundButNotDerivedOnes() throws Exception {
        try (FlexiQ queue = clientWithKeyRetention(HOUR)) {
            assertReplayed(queue, againAfterCompletion(queue, EnqueueOptions.builder().uniqueKey("u-7").build()));
            assertAcceptedAnew(queue, againAfterCompletion(queue, EnqueueOptions.builder().idempotent(true).build()));
            // The call's retention still wins over the client's.
            assertAcceptedAnew(queue, againAfterCompletion(queue,
                    EnqueueOptions.builder().jobId("j-7").keyRetention(Duration.ZERO).build()));
        }
    }

    @Test
    void theClientsDefaultReplacesTheIdempotencyKeysDay() throws Exception {
        try (FlexiQ queue = clientWithKeyRetention(Duration.ZERO)) {
            assertAcceptedAnew(queue, againAfterCompletion(queue,
                    EnqueueOptions.builder().idempotencyKey("order-7:place").build()));
        }
    }

    @Test
    void theSameKeyAsIdempotencyKeyThenUniqueKeyConflictsOnItsRetention() {
        try (FlexiQ queue = TestDatabase.client()) {
            String id = queue.enqueue(CHARGE, ORDER, EnqueueOptions.builder().idempotencyKey("k").build());
            IdempotencyConflictException e = assertThrows(IdempotencyConflictException.class,
                    () -> queue.enqueue(CHARGE, ORDER, EnqueueOptions.builder().uniqueKey("k").build()));
            assertEquals(Optional.of(id), e.existingJobId());
            assertEquals(List.of("keyRetention"), e.fields());
            // What is compared is the retention in effect: the default, spelled out, is the same request.
            EnqueueResult spelledOut = queue.enqueueWithResult(CHARGE, ORDER, EnqueueOptions.builder()
                    .idempotencyKey("k").keyRetention(EnqueueOptions.DEFAULT_IDEMPOTENCY_KEY_RETENTION).build());
            assertEquals(EnqueueOutcome.REPLAYED, spelledOut.outcome());
            assertEquals(id, spelledOut.jobId());
        }
    }

    @Test
    void theClientsDefaultIsRangeChecked() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FlexiQ.builder("postgres://app@localhost/app").keyRetention(Duration.ofSeconds(-1)));
        assertEquals("keyRetention must be between 0 and 36500 days, got PT-1S", e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> FlexiQ.builder("postgres://app@localhost/app").keyRetention(Duration.ofDays(36_501)));
        assertThrows(IllegalArgumentException.class, () -> FlexiQ.builder("postgres://app@localhost/app").keyRetention(null));
    }
}
