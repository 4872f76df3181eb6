package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Enqueue through the real native library against a real PostgreSQL. */
class EnqueueTest {
    /** A payload type. */
    public record Order(long customerId, long amountCents) {}

    static final Task<Order> CHARGE = Task.of("charge_customer", Order.class);
    static final Task<Order> CHARGE_ONCE = CHARGE.idempotent(true);

    private FlexiQ queue;

    @BeforeEach
    void connect() {
        queue = TestDatabase.client();
    }

    @AfterEach
    void close() {
        queue.close();
    }

    private static EnqueueOptions key(String key) {
        return EnqueueOptions.builder().uniqueKey(key).build();
    }

    @Test
    void doubleClickMakesOneJob() {
        Order order = new Order(42, 1000);
        EnqueueResult first = queue.enqueueWithResult(CHARGE, order, key("charge:42:1000"));
        EnqueueResult second = queue.enqueueWithResult(CHARGE, order, key("charge:42:1000"));
        assertEquals(EnqueueOutcome.ACCEPTED, first.outcome());
        assertEquals(EnqueueOutcome.REPLAYED, second.outcome());
        assertEquals(first.jobId(), second.jobId());
        assertEquals(first.jobId(), queue.enqueue(CHARGE, order, key("charge:42:1000")));
    }

    @Test
    void idempotentTaskDedupsOnItsDerivedKey() {
        String a = queue.enqueue(CHARGE_ONCE, new Order(1, 5));
        assertEquals(a, queue.enqueue(CHARGE_ONCE, new Order(1, 5)));
        assertNotEquals(a, queue.enqueue(CHARGE_ONCE, new Order(1, 6)));
        assertNotEquals(a, queue.enqueue(CHARGE_ONCE, new Order(1, 5), EnqueueOptions.builder().idempotent(false).build()));
        JobInfo job = queue.getJob(a).orElseThrow();
        String derived = DedupKeys.autoKey("charge_customer", new CanonicalJsonSerializer().serialize(new Order(1, 5)));
        assertEquals(Optional.of(sha256Hex(derived)), job.keyDigest());
    }

    @Test
    void aNullPayloadIsStoredAsJsonNullAndNullTasksAndListsAreRefused() {
        String id = queue.enqueue(CHARGE, null);
        assertEquals(Optional.of("null"), queue.getPayload(id));
        assertEquals("task must not be null",
                assertThrows(IllegalArgumentException.class, () -> queue.enqueue(null, new Order(1, 1))).getMessage());
        assertEquals("task must not be null", assertThrows(IllegalArgumentException.class,
                () -> queue.enqueueMany(null, List.of(), EnqueueOptions.defaults())).getMessage());
        NullPointerException noList = assertThrows(NullPointerException.class,
                () -> queue.enqueueMany(CHARGE, null, EnqueueOptions.defaults()));
        assertEquals("payloads", noList.getMessage());
        NullPointerException noEntry = assertThrows(NullPointerException.class,
                () -> queue.enqueueMany(java.util.Arrays.asList(EnqueueRequest.of(CHARGE, new Order(1, 1)), null)));
        assertEquals("requests holds null at index 1", noEntry.getMessage());
    }

    @Test
    void unkeyedEnqueuesAlwaysInsert() {
        assertNotEquals(queue.enqueue(CHARGE, new Order(1, 1)), queue.enqueue(CHARGE, new Order(1, 1)));
    }

    @Test
    void conflictNamesTheJobAndTheFieldsAndWritesNothing() {
        String id = queue.enqueue(CHARGE, new Order(7, 100), key("order-7"));
        EnqueueOptions changed = EnqueueOptions.builder().uniqueKey("order-7").priority(3).tags("vip").build();
        IdempotencyConflictException e = assertThrows(IdempotencyConflictException.class,
                () -> queue.enqueue(CHARGE, new Order(7, 200), changed));
        assertEquals(Optional.of(id), e.existingJobId());
        assertEquals(List.of("payload", "priority", "tags"), e.fields());
        assertTrue(e.getMessage().contains("is bound to job " + id), e.getMessage());
        assertTrue(e.getMessage().contains("differing fields: payload, priority, tags"), e.getMessage());
        assertFalse(e.getMessage().contains("order-7"), e.getMessage());
        assertEquals(sha256Hex("order-7"), e.keyDigest());
        assertEquals(EnqueueOutcome.REPLAYED, queue.enqueueWithResult(CHARGE, new Order(7, 100), key("order-7")).outcome());
    }

    @Test
    void delaysAreComparedAsRequestedAndOmittedRunAtStaysOmitted() throws Exception {
        EnqueueOptions later = EnqueueOptions.builder().uniqueKey("later").delay(Duration.ofMinutes(5)).build();
        String id = queue.enqueue(CHARGE, new Order(1, 1), later);
        // Real time must pass, so that a replay that compared the due time worked out would differ.
        Thread.sleep(20);
        assertEquals(id, queue.enqueue(CHARGE, new Order(1, 1), later));
        assertEquals(JobState.SCHEDULED, queue.getJob(id).orElseThrow().state());
        IdempotencyConflictException e = assertThrows(IdempotencyConflictException.class, () -> queue.enqueue(
                CHARGE, new Order(1, 1), EnqueueOptions.builder().uniqueKey("later").delay(Duration.ofMinutes(6)).build()));
        assertEquals(List.of("delay"), e.fields());
    }

    @Test
    void sameKeyInTwoScopesMakesTwoJobs() {
        String a = queue.enqueue(CHARGE, new Order(1, 1), EnqueueOptions.builder().uniqueKey("k").scope("capture").build());
        String b = queue.enqueue(CHARGE, new Order(1, 1), EnqueueOptions.builder().uniqueKey("k").scope("refund").build());
        assertNotEquals(a, b);
    }

    @Test
    void completionReleasesTheKeyUnlessRetentionHoldsIt() {
        String first = queue.enqueue(CHARGE, new Order(1, 1), key("hook-1"));
        assertTrue(queue.markCompleted(first));
        String second = queue.enqueue(CHARGE, new Order(1, 1), key("hook-1"));
        assertNotEquals(first, second);

        EnqueueOptions retained = EnqueueOptions.builder().uniqueKey("hook-2").keyRetention(Duration.ofHours(1)).build();
        String kept = queue.enqueue(CHARGE, new Order(1, 1), retained);
        assertTrue(queue.markCompleted(kept));
        EnqueueResult replay = queue.enqueueWithResult(CHARGE, new Order(1, 1), retained);
        assertEquals(kept, replay.jobId());
        assertEquals(EnqueueOutcome.REPLAYED, replay.outcome());
        JobInfo job = queue.getJob(kept).orElseThrow();
        assertEquals(JobState.COMPLETED, job.state());
        assertTrue(job.keyHeld());
    }

    @Test
    void cancelAndPurgeReleaseTheKey() {
        String a = queue.enqueue(CHARGE, new Order(1, 1), key("c"));
        assertTrue(queue.cancel(a));
        assertEquals(JobState.CANCELLED, queue.getJob(a).orElseThrow().state());
        assertNotEquals(a, queue.enqueue(CHARGE, new Order(1, 1), key("c")));

        EnqueueOptions retained = EnqueueOptions.builder().uniqueKey("p").keyRetention(Duration.ofHours(1)).build();
        String b = queue.enqueue(CHARGE, new Order(1, 1), retained);
        assertTrue(queue.purge(b));
        assertEquals(Optional.empty(), queue.getJob(b));
        assertEquals(EnqueueOutcome.ACCEPTED, queue.enqueueWithResult(CHARGE, new Order(1, 1), retained).outcome());
    }

    @Test
    void getJobShowsPreviewAndDigestNeverTheKey() {
        String id = queue.enqueue(CHARGE, new Order(1, 1),
                EnqueueOptions.builder().uniqueKey("customer-000123").queue("billing").maxAttempts(4).tags("b", "a").build());
        JobInfo job = queue.getJob(id).orElseThrow();
        assertEquals(id, job.id());
        assertEquals("billing", job.queue());
        assertEquals("charge_customer", job.task());
        assertEquals(JobState.AVAILABLE, job.state());
        assertEquals(0, job.attempt());
        assertEquals(4, job.maxAttempts());
        assertEquals(List.of("a", "b"), job.tags());
        assertEquals(Optional.of("default"), job.keyScope());
        assertEquals(Optional.of("custo…"), job.keyPreview());
        assertEquals(Optional.of(sha256Hex("customer-000123")), job.keyDigest());
        assertFalse(job.toString().contains("customer-000123"));
    }

    @Test
    void bulkMapsDuplicatesToOneJobInInputOrder() {
        String existing = queue.enqueue(CHARGE, new Order(9, 9), key("b-existing"));
        List<EnqueueResult> results = queue.enqueueManyWithResults(List.of(
                EnqueueRequest.of(CHARGE, new Order(1, 1), key("b-1")),
                EnqueueRequest.of(CHARGE, new Order(2, 2)),
                EnqueueRequest.of(CHARGE, new Order(9, 9), key("b-existing")),
                EnqueueRequest.of(CHARGE, new Order(1, 1), key("b-1"))));
        assertEquals(results.get(0).jobId(), results.get(3).jobId());
        assertEquals(existing, results.get(2).jobId());
        assertEquals(List.of(EnqueueOutcome.ACCEPTED, EnqueueOutcome.ACCEPTED, EnqueueOutcome.REPLAYED,
                EnqueueOutcome.REPLAYED), results.stream().map(EnqueueResult::outcome).toList());

        List<String> ids = queue.enqueueMany(CHARGE_ONCE, List.of(new Order(5, 5), new Order(6, 6), new Order(5, 5)),
                EnqueueOptions.defaults());
        assertEquals(ids.get(0), ids.get(2));
        assertNotEquals(ids.get(0), ids.get(1));
    }

    @Test
    void bulkConflictFailsTheWholeBatchNamingTheEntry() {
        queue.enqueue(CHARGE, new Order(1, 1), key("held"));
        IdempotencyConflictException e = assertThrows(IdempotencyConflictException.class,
                () -> queue.enqueueMany(List.of(
                        EnqueueRequest.of(CHARGE, new Order(3, 3), key("new-1")),
                        EnqueueRequest.of(CHARGE, new Order(1, 2), key("held")))));
        assertEquals(1, e.entryIndex());
        assertTrue(e.getMessage().contains("(batch entry 1)"), e.getMessage());
        assertEquals(EnqueueOutcome.ACCEPTED, queue.enqueueWithResult(CHARGE, new Order(3, 3), key("new-1")).outcome());
    }

    @Test
    void closedClientThrowsIllegalState() {
        FlexiQ other = TestDatabase.client();
        other.close();
        other.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> other.enqueue(CHARGE, new Order(1, 1)));
        assertEquals("this FlexiQ client is closed", e.getMessage());
    }

    @Test
    void unreachableDatabaseFailsWithinTheConnectTimeout() throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String url = "postgres://postgres@127.0.0.1:" + port + "/postgres";
        long start = System.nanoTime();
        assertThrows(StorageUnavailableException.class,
                () -> FlexiQ.builder(url).connectTimeout(Duration.ofMillis(500)).build());
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(10).toNanos());
    }

    @Test
    void badJobIdsAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> queue.cancel("abc"));
        assertEquals("not a FlexiQ job id: abc", e.getMessage());
    }

    static String sha256Hex(String s) {
        try {
            byte[] d = java.security.MessageDigest.getInstance("SHA-256").digest(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            StringBuilder hex = new StringBuilder();
            for (byte b : d) {
                hex.append(String.format("%02x", b));
            }
            return hex.toString();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }
}
