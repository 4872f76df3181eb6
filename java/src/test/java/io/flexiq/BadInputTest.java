package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
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
        refused("delay must not be negative, got PT-1S", () -> EnqueueOptions.builder().delay(Duration.ofSeconds(-1)));
        refused("keyRetention must not be negative, got PT-1S",
                () -> EnqueueOptions.builder().keyRetention(Duration.ofSeconds(-1)));
        refused("timeout must be positive, got PT0S", () -> EnqueueOptions.builder().timeout(Duration.ZERO));
        refused("maxAttempts must be at least 1, got 0", () -> EnqueueOptions.builder().maxAttempts(0));
    }

    @Test
    void badScopesQueuesAndTags() {
        refused("scope must not be empty", () -> EnqueueOptions.builder().scope(""));
        refused("queue must not contain a NUL character (found at byte 1)", () -> EnqueueOptions.builder().queue("q\0"));
        refused("tag must not be empty", () -> EnqueueOptions.builder().tags("ok", ""));
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
