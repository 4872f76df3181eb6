package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.flexiq.internal.Limits;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The edges of what a job holds, through the real native library and a real PostgreSQL: keys and
 * payloads are stored exactly or refused, never changed; times and durations are range-checked.
 */
class LimitsTest {
    /** A payload with the kinds of values that canonical JSON might not hold. */
    public record Entry(String text, Map<String, Integer> counts, long amount, double ratio, BigDecimal price) {
        static Entry of(long amount) {
            return new Entry("ok", Map.of(), amount, 0.5, BigDecimal.ONE);
        }
    }

    static final Task<Entry> RECORD = Task.of("record_entry", Entry.class);

    private String schema;
    private FlexiQ queue;

    @BeforeEach
    void connect() {
        schema = TestDatabase.freshSchema();
        queue = FlexiQ.builder(TestDatabase.url()).schema(schema).migrate(true).build();
    }

    @AfterEach
    void close() {
        queue.close();
    }

    private long jobCount() throws Exception {
        return TestDatabase.scalar("SELECT count(*) FROM " + schema + ".jobs");
    }

    /** Enqueueing {@code payload} is refused, names {@code path} and writes nothing. */
    private <T> String refusedPayload(Task<T> task, T payload, String path) throws Exception {
        PayloadSerializationException e = assertThrows(PayloadSerializationException.class,
                () -> queue.enqueue(task, payload));
        assertTrue(e.getMessage().startsWith("payload is not serializable as canonical JSON: "), e.getMessage());
        assertTrue(e.getMessage().contains(" at " + path + " ") || e.getMessage().contains(" at " + path + ";"),
                e.getMessage());
        assertEquals(0, jobCount());
        return e.getMessage();
    }

    /** Stores as many bytes as the payload says: what is stored is what the limits count. */
    static final class SizedCodec implements PayloadCodec {
        @Override
        public String id() {
            return "sized";
        }

        @Override
        public byte[] encode(String task, byte[] payload) {
            return new byte[Integer.parseInt(new String(payload, StandardCharsets.UTF_8))];
        }

        @Override
        public byte[] decode(String task, byte[] stored) {
            return Integer.toString(stored.length).getBytes(StandardCharsets.UTF_8);
        }
    }

    @Test
    void payloadsTooLargeForOneStatementAreRefusedBeforeAnythingIsSent() throws Exception {
        Task<Integer> sized = Task.of("sized", Integer.class);
        try (FlexiQ client = FlexiQ.builder(TestDatabase.url()).schema(schema).payloadCodec(new SizedCodec()).build()) {
            client.enqueue(sized, 1 << 20);
            PayloadSerializationException one = assertThrows(PayloadSerializationException.class,
                    () -> client.enqueue(sized, Limits.MAX_PAYLOAD_BYTES + 1));
            assertEquals("the payload is 268435457 bytes as stored; the limit is 268435456 (256 MiB): store large"
                    + " data elsewhere and enqueue a reference to it", one.getMessage());
            int third = (int) (Limits.MAX_BATCH_PAYLOAD_BYTES / 3);
            PayloadSerializationException batch = assertThrows(PayloadSerializationException.class,
                    () -> client.enqueueMany(sized, List.of(third, third, third, 8), EnqueueOptions.defaults()));
            assertEquals("the batch's payloads are 536870918 bytes as stored; one enqueue takes at most 536870912"
                    + " (512 MiB): split the batch into smaller calls", batch.getMessage());
        }
        assertEquals(1, jobCount());
    }

    @Test
    void keysThatAreNotValidUtf16AreRefusedInsteadOfCollapsingIntoOne() throws Exception {
        // Each lone surrogate used to become U+FFFD on its way to native code: two keys, one job.
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> EnqueueOptions.builder().uniqueKey("u-\uDC00"));
        assertEquals("key is not valid UTF-16: unpaired surrogate U+DC00 at index 2; "
                + "a string must hold whole characters", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> EnqueueOptions.builder().scope("s-\uDFFF"));
        assertThrows(IllegalArgumentException.class, () -> EnqueueOptions.builder().queue("sq\uD800"));
        assertThrows(IllegalArgumentException.class, () -> queue.redrive("1", "r\uDC00"));
        assertThrows(IllegalArgumentException.class, () -> queue.worker().queues("default", "q\uDBFF"));

        // A whole character is one key, stored and replayed as such.
        String id = queue.enqueue(RECORD, Entry.of(1), EnqueueOptions.builder().uniqueKey("u-\uD83D\uDE00")
                .queue("sq\uD83D\uDE00").build());
        assertEquals("sq\uD83D\uDE00", queue.getJob(id).orElseThrow().queue());
        EnqueueResult other = queue.enqueueWithResult(RECORD, Entry.of(1),
                EnqueueOptions.builder().uniqueKey("u-\uD83D\uDE01").queue("sq\uD83D\uDE00").build());
        assertEquals(EnqueueOutcome.ACCEPTED, other.outcome());
        assertEquals(2, jobCount());
    }

    @Test
    void dueTimesFromTheYear1To9999ComeBackToTheMicrosecond() {
        Instant[] times = {
            Instant.parse("0001-01-01T00:00:00Z"),
            Instant.parse("0001-01-01T00:00:00.000001Z"),
            Instant.parse("1969-12-31T23:59:59.999999Z"),
            Instant.parse("2255-06-05T23:47:34.740993Z"), // 2^53 + 1 microseconds after 1970
            Instant.parse("9999-12-31T23:59:59.999998Z"),
            Instant.parse("9999-12-31T23:59:59.999999Z"),
        };
        for (int i = 0; i < times.length; i++) {
            EnqueueOptions at = EnqueueOptions.builder().uniqueKey("t" + i).runAt(times[i]).build();
            String id = queue.enqueue(RECORD, Entry.of(i), at);
            assertEquals(times[i], queue.getJob(id).orElseThrow().runAt(), "job " + i);
            assertEquals(EnqueueOutcome.REPLAYED, queue.enqueueWithResult(RECORD, Entry.of(i), at).outcome());
        }
        // Finer than a microsecond is dropped, as documented.
        String id = queue.enqueue(RECORD, Entry.of(9),
                EnqueueOptions.builder().runAt(Instant.parse("9999-12-31T23:59:59.999999999Z")).build());
        assertEquals(times[5], queue.getJob(id).orElseThrow().runAt());
        // A microsecond apart is another request, even in the year 9999.
        IdempotencyConflictException e = assertThrows(IdempotencyConflictException.class,
                () -> queue.enqueue(RECORD, Entry.of(5), EnqueueOptions.builder().uniqueKey("t5").runAt(times[4]).build()));
        assertEquals(List.of("runAt"), e.fields());
    }

    @Test
    void integersBeyond2To53AreRefusedNamingThePath() throws Exception {
        String message = refusedPayload(RECORD, Entry.of(1234567890123456789L), "$.amount");
        assertEquals("payload is not serializable as canonical JSON: the integer 1234567890123456789 at $.amount"
                + " is beyond 2^53 (9007199254740992), past which the IEEE 754 doubles of canonical JSON do not"
                + " hold every integer (this one would become 1234567890123456800); carry such numbers as strings",
                message);
        refusedPayload(RECORD, Entry.of(-9007199254740994L), "$.amount");
        refusedPayload(RECORD, Entry.of(Long.MIN_VALUE), "$.amount");
        // 1e20 is a double, but canonical JSON writes it as an integer beyond 2^53.
        refusedPayload(RECORD, new Entry("ok", Map.of(), 1, 1e20, BigDecimal.ONE), "$.ratio");
    }

    @Test
    void decimalsADoubleDoesNotHoldAreRefused() throws Exception {
        String message = refusedPayload(RECORD,
                new Entry("ok", Map.of(), 1, 0.5, new BigDecimal("1.234567890123456789012345")), "$.price");
        assertTrue(message.contains("is not exactly an IEEE 754 double, the only kind of number canonical JSON has:"
                + " it would become 1.2345678901234567; carry such numbers as strings"), message);
    }

    @Test
    void theHandlerReceivesExactlyTheNumbersThatWereEnqueued() throws Exception {
        List<Entry> sent = List.of(
                new Entry("a", Map.of("n", 1), 9007199254740992L, 0.1, new BigDecimal("0.30000000000000004")),
                new Entry("b", Map.of(), -9007199254740992L, 1e23, new BigDecimal("1E+21")),
                new Entry("c", Map.of(), 0, Double.MAX_VALUE, new BigDecimal("123.456")),
                new Entry("d", Map.of(), 7, 8.41e21, new BigDecimal("-0.000001")),
                new Entry("e", Map.of(), 8, Double.MIN_NORMAL, new BigDecimal("1e-7")));
        for (Entry entry : sent) {
            queue.enqueue(RECORD, entry);
        }
        ConcurrentLinkedQueue<Entry> received = new ConcurrentLinkedQueue<>();
        WorkerTest.running(queue.worker().handle(RECORD, (entry, job) -> received.add(entry))
                .pollInterval(Duration.ofMillis(20)), () -> WorkerTest.await("handlers", () -> received.size() == 5));
        for (Entry entry : sent) {
            Entry got = received.stream().filter(r -> r.text().equals(entry.text())).findFirst().orElseThrow();
            assertEquals(entry.amount(), got.amount());
            assertEquals(entry.ratio(), got.ratio());
            assertEquals(0, entry.price().compareTo(got.price()), entry.price() + " came back as " + got.price());
            assertEquals(entry.counts(), got.counts());
        }
    }

    @Test
    void nanAndInfinityAreRefusedSayingJsonHasNone() throws Exception {
        String message = refusedPayload(RECORD, new Entry("ok", Map.of(), 1, Double.NaN, BigDecimal.ONE), "$.ratio");
        assertEquals("payload is not serializable as canonical JSON: NaN at $.ratio is not JSON, which has no NaN"
                + " or Infinity; send null or a string instead", message);
        refusedPayload(RECORD, new Entry("ok", Map.of(), 1, Double.NEGATIVE_INFINITY, BigDecimal.ONE), "$.ratio");
    }

    @Test
    void stringsAndMemberNamesMustBeValidUnicode() throws Exception {
        String message = refusedPayload(RECORD, new Entry("u-\uDC00", Map.of(), 1, 0.5, BigDecimal.ONE), "$.text");
        assertTrue(message.contains("the string at $.text is not valid Unicode ("), message);
        assertTrue(message.endsWith("strings must hold whole characters, without unpaired UTF-16 surrogates"),
                message);
        message = refusedPayload(RECORD, new Entry("ok", Map.of("sq\uD800", 1), 1, 0.5, BigDecimal.ONE), "$.counts");
        assertTrue(message.contains("a member name in the object at $.counts is not valid Unicode"), message);
    }

    private static JsonNode nested(int depth) {
        ArrayNode root = JsonNodeFactory.instance.arrayNode();
        ArrayNode inner = root;
        for (int i = 1; i < depth; i++) {
            inner = inner.addArray();
        }
        return root;
    }

    @Test
    void nestingIsLimitedTo128Levels() throws Exception {
        Task<JsonNode> tree = Task.of("tree", JsonNode.class);
        String path = "$" + "[0]".repeat(128);
        String message = refusedPayload(tree, nested(129), path);
        assertTrue(message.contains("the payload nests arrays and objects deeper than 128 levels, at " + path
                + "; flatten it, or carry the deep part as a string"), message);
        queue.enqueue(tree, nested(128));
        assertEquals(1, jobCount());
    }

    @Test
    void theLongestSchemaNameLeavesRoomForItsWakeUpChannel() throws Exception {
        String prefix = TestDatabase.freshSchema() + "_";
        String longest = prefix + "x".repeat(56 - prefix.length());
        try (FlexiQ client = FlexiQ.builder(TestDatabase.url()).schema(longest).migrate(true).build()) {
            client.enqueue(RECORD, Entry.of(1));
        }
        assertEquals(1, TestDatabase.scalar("SELECT count(*) FROM " + longest + ".jobs"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FlexiQ.builder(TestDatabase.url()).schema(longest + "x"));
        assertTrue(e.getMessage().contains("must be 1 to 56 characters of a-z, 0-9 and _"), e.getMessage());
    }

    @Test
    void workerSettingsAreRangeChecked() {
        Duration huge = Duration.ofSeconds(Long.MAX_VALUE);
        Worker.Builder worker = queue.worker();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> worker.lease(huge));
        assertEquals("lease must be between 1 ms and 1 day, got " + huge, e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> worker.pollInterval(huge));
        assertEquals("pollInterval must be between 1 ms and 1 day, got " + huge, e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> worker.shutdownTimeout(huge));
        assertEquals("shutdownTimeout must be between 0 and 1 day, got " + huge, e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> worker.lease(Duration.ofNanos(999_999)));
        assertEquals("lease must be between 1 ms and 1 day, got PT0.000999999S", e.getMessage());
        worker.lease(Duration.ofDays(1)).pollInterval(Duration.ofDays(1)).shutdownTimeout(Duration.ZERO);
    }
}
