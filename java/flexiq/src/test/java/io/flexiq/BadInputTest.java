package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Bad input is refused in Java, with a message that says what is wrong, before any native call. */
class BadInputTest {
    private static void refused(String expectedMessage, Runnable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call::run);
        assertEquals(expectedMessage, e.getMessage());
    }

    @Test
    void emptyKeys() {
        refused("key must not be empty", () -> EnqueueOptions.builder().uniqueKey(""));
        refused("key must not be empty", () -> EnqueueOptions.builder().jobId(""));
        refused("key must not be empty", () -> EnqueueOptions.builder().idempotencyKey(""));
    }

    @Test
    void keysOver512BytesOfUtf8() {
        EnqueueOptions.builder().uniqueKey("k".repeat(512));
        refused("key is 513 bytes of UTF-8; the limit is 512", () -> EnqueueOptions.builder().uniqueKey("k".repeat(513)));
        // 171 euro signs are 171 chars but 513 bytes.
        refused("key is 513 bytes of UTF-8; the limit is 512",
                () -> EnqueueOptions.builder().idempotencyKey("€".repeat(171)));
    }

    @Test
    void nulInKey() {
        refused("key must not contain a NUL character (found at byte 3)",
                () -> EnqueueOptions.builder().uniqueKey("abc\0def"));
    }

    @Test
    void taskNames() {
        refused("task name must not be empty", () -> Task.of("", String.class));
        refused("task name must not contain a NUL character (found at byte 4)", () -> Task.of("send\0mail", String.class));
        refused("task name is 256 bytes of UTF-8; the limit is 255", () -> Task.of("t".repeat(256), String.class));
        refused("task name must not be empty", () -> DedupKeys.autoKey("", new byte[0]));
    }

    @Test
    void negativeOrZeroDurations() {
        refused("delay must be between 0 and 36500 days, got PT-1S",
                () -> EnqueueOptions.builder().delay(Duration.ofSeconds(-1)));
        refused("keyRetention must be between 0 and 36500 days, got PT-1S",
                () -> EnqueueOptions.builder().keyRetention(Duration.ofSeconds(-1)));
        refused("timeout must be between 1 ms and 36500 days, got PT0S",
                () -> EnqueueOptions.builder().timeout(Duration.ZERO));
        refused("maxAttempts must be at least 1, got 0", () -> EnqueueOptions.builder().maxAttempts(0));
    }

    @Test
    void hugeDurationsAndInstantsAreRefusedWithTheirRange() {
        Duration huge = Duration.ofSeconds(Long.MAX_VALUE);
        refused("delay must be between 0 and 36500 days, got " + huge, () -> EnqueueOptions.builder().delay(huge));
        refused("keyRetention must be between 0 and 36500 days, got " + huge,
                () -> EnqueueOptions.builder().keyRetention(huge));
        refused("timeout must be between 1 ms and 36500 days, got " + huge,
                () -> EnqueueOptions.builder().timeout(huge));
        refused("initialDelay must be between 0 and 36500 days, got " + huge, () -> RetryPolicy.fixed(huge));
        refused("maxDelay must be between 0 and 36500 days, got " + huge,
                () -> RetryPolicy.exponential(Duration.ofSeconds(1), huge));
        refused("connectTimeout must be between 1 ms and 1 day, got " + huge,
                () -> FlexiQ.builder("postgres://localhost/db").connectTimeout(huge));
        String range = "runAt must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z, got ";
        refused(range + Instant.MAX, () -> EnqueueOptions.builder().runAt(Instant.MAX));
        refused(range + Instant.MIN, () -> EnqueueOptions.builder().runAt(Instant.MIN));
        refused(range + "+10000-01-01T00:00:00Z",
                () -> EnqueueOptions.builder().runAt(Instant.parse("+10000-01-01T00:00:00Z")));
        refused(range + "0000-12-31T23:59:59.999999999Z",
                () -> EnqueueOptions.builder().runAt(Instant.parse("0000-12-31T23:59:59.999999999Z")));

        Duration longest = Duration.ofDays(36_500);
        EnqueueOptions.builder().delay(longest).keyRetention(longest).timeout(longest)
                .retryPolicy(RetryPolicy.fixed(longest)).build();
        refused("delay must be between 0 and 36500 days, got PT876000H0.001S",
                () -> EnqueueOptions.builder().delay(longest.plusMillis(1)));
        EnqueueOptions.builder().runAt(Instant.parse("0001-01-01T00:00:00Z"))
                .runAt(Instant.parse("9999-12-31T23:59:59.999999999Z"));
    }

    @Test
    void schemaNamesLeaveRoomForTheWakeUpChannel() {
        FlexiQ.builder("postgres://localhost/db").schema("s".repeat(56));
        refused("schema name \"" + "s".repeat(57) + "\" must be 1 to 56 characters of a-z, 0-9 and _, not starting"
                + " with a digit (PostgreSQL names its wake-up channel flexiq_<schema>, in at most 63 bytes)",
                () -> FlexiQ.builder("postgres://localhost/db").schema("s".repeat(57)));
    }

    @Test
    void schemaNamesThatPostgresqlKeepsForItselfAreRefused() {
        for (String reserved : new String[] {"pg_catalog", "pg_temp_1", "information_schema"}) {
            refused("schema name \"" + reserved + "\" is reserved for PostgreSQL's own schemas (pg_… and"
                    + " information_schema); choose another, such as the default flexiq",
                    () -> FlexiQ.builder("postgres://localhost/db").schema(reserved));
        }
        FlexiQ.builder("postgres://localhost/db").schema("pgq");
    }

    private static String notUtf16(String what, String surrogate, int index) {
        return what + " is not valid UTF-16: unpaired surrogate U+" + surrogate + " at index " + index
                + "; a string must hold whole characters";
    }

    @Test
    void everyStringThatCrossesMustBeValidUtf16() {
        refused(notUtf16("key", "DC00", 2), () -> EnqueueOptions.builder().uniqueKey("u-\uDC00"));
        refused(notUtf16("key", "DFFF", 2), () -> EnqueueOptions.builder().jobId("u-\uDFFF"));
        refused(notUtf16("key", "D800", 0), () -> EnqueueOptions.builder().idempotencyKey("\uD800"));
        refused(notUtf16("scope", "DE00", 1), () -> EnqueueOptions.builder().scope("s\uDE00\uD83D"));
        refused(notUtf16("queue", "D800", 2), () -> EnqueueOptions.builder().queue("sq\uD800"));
        refused(notUtf16("tag", "DC00", 0), () -> EnqueueOptions.builder().tags("ok", "\uDC00"));
        refused(notUtf16("task name", "D83D", 4), () -> Task.of("send\uD83D", String.class));
        refused(notUtf16("task name", "DC00", 0), () -> DedupKeys.autoKey("\uDC00", new byte[0]));
        refused(notUtf16("url", "D800", 11), () -> FlexiQ.builder("postgres://\uD800"));
        JobContext job = new JobContext(null, new CanonicalJsonSerializer(), 1, 1, 1, "default", "t");
        refused(notUtf16("checkpoint name", "DC00", 2), () -> call(() -> job.checkpoint("cp\uDC00", String.class, () -> "x")));
        refused("checkpoint name must not be empty", () -> call(() -> job.checkpoint("", String.class, () -> "x")));

        // Whole characters pass, and count as their UTF-8 bytes.
        EnqueueOptions.builder().uniqueKey("u-\uD83D\uDE00").scope("\uD83D\uDE00").queue("q\uD83D\uDE00");
        EnqueueOptions.builder().uniqueKey("\uD83D\uDE00".repeat(128));
        refused("key is 513 bytes of UTF-8; the limit is 512",
                () -> EnqueueOptions.builder().uniqueKey("\uD83D\uDE00".repeat(128) + "k"));
    }

    private interface Call {
        void run() throws Exception;
    }

    private static void call(Call call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void badScopesQueuesAndTags() {
        refused("scope must not be empty", () -> EnqueueOptions.builder().scope(""));
        refused("queue must not contain a NUL character (found at byte 1)", () -> EnqueueOptions.builder().queue("q\0"));
        refused("tag must not be empty", () -> EnqueueOptions.builder().tags("ok", ""));
    }

    @Test
    void aNullTaskIsRefusedAlikeByEveryCallThatTakesOne() {
        JobHandler<String> nothing = (payload, job) -> { };
        refused("task must not be null", () -> EnqueueRequest.of(null, "x"));
        refused("task must not be null", () -> EnqueueRequest.of(null, "x", EnqueueOptions.defaults()));
        refused("task must not be null", () -> new Worker.Builder(null).handle(null, nothing));
        refused("task must not be null", () -> TestQueue.create().handle(null, nothing));
        refused("task must not be null", () -> TestQueue.create().enqueue(null, "x"));
        refused("task must not be null",
                () -> TestQueue.create().enqueueMany(null, List.of(), EnqueueOptions.defaults()));
        refused("task must not be null", () -> DedupKeys.resolve(null, EnqueueOptions.defaults(), new byte[0]));
        refused("payload must not be null",
                () -> DedupKeys.resolve(Task.of("t", String.class), EnqueueOptions.defaults(), null));
    }

    /** A bean whose getter throws: Jackson cannot serialize it. */
    public static final class Unserializable {
        public String getValue() {
            throw new IllegalStateException("boom");
        }
    }

    @Test
    void payloadThatDoesNotSerialize() {
        PayloadSerializationException e = assertThrows(PayloadSerializationException.class,
                () -> new CanonicalJsonSerializer().serialize(new Unserializable()));
        assertTrue(e.getMessage().startsWith(
                "payload of type io.flexiq.BadInputTest$Unserializable does not serialize to JSON: "), e.getMessage());
        assertTrue(e.getMessage().contains("boom"), e.getMessage());
    }

    /** A payload holding NaN: JSON has no NaN, so the canonical form refuses it. */
    public record Reading(double value) {}

    @Test
    void nanHasNoJsonForm() {
        PayloadSerializationException e = assertThrows(PayloadSerializationException.class,
                () -> new CanonicalJsonSerializer().serialize(new Reading(Double.NaN)));
        assertTrue(e.getMessage().startsWith("payload is not serializable as canonical JSON: "), e.getMessage());
    }
}
