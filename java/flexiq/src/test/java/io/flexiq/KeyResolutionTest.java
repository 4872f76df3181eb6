package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Every row of the key precedence: uniqueKey, idempotencyKey, auto-derived, none. */
class KeyResolutionTest {
    private static final Task<String> PLAIN = Task.of("send_email", String.class);
    private static final Task<String> IDEMPOTENT = PLAIN.idempotent(true);
    private static final byte[] PAYLOAD = "{\"to\":\"a@example.com\"}".getBytes(StandardCharsets.UTF_8);

    private static Optional<String> resolve(Task<?> task, EnqueueOptions.Builder options) {
        return DedupKeys.resolve(task, options.build(), PAYLOAD);
    }

    /** The recipe computed here, in plain Java, independently of the native core. */
    private static String expectedAutoKey(String task, byte[] payload) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        sha.update(task.getBytes(StandardCharsets.UTF_8));
        sha.update((byte) 0);
        sha.update(payload);
        StringBuilder hex = new StringBuilder("auto:");
        for (byte b : sha.digest()) {
            hex.append(String.format("%02x", b));
        }
        return hex.substring(0, 5 + 32);
    }

    @Test
    void noInputsAndPlainTaskMeansNoKey() {
        assertEquals(Optional.empty(), resolve(PLAIN, EnqueueOptions.builder()));
    }

    @Test
    void idempotentTaskDerivesKeyByDefault() throws Exception {
        assertEquals(Optional.of(expectedAutoKey("send_email", PAYLOAD)), resolve(IDEMPOTENT, EnqueueOptions.builder()));
    }

    @Test
    void callIdempotentFalseTurnsTaskDefaultOff() {
        assertEquals(Optional.empty(), resolve(IDEMPOTENT, EnqueueOptions.builder().idempotent(false)));
    }

    @Test
    void callIdempotentTrueDerivesKeyForPlainTask() throws Exception {
        assertEquals(Optional.of(expectedAutoKey("send_email", PAYLOAD)),
                resolve(PLAIN, EnqueueOptions.builder().idempotent(true)));
    }

    @Test
    void idempotencyKeyBeatsDerivation() {
        assertEquals(Optional.of("mail:1"), resolve(IDEMPOTENT, EnqueueOptions.builder().idempotencyKey("mail:1")));
        assertEquals(Optional.of("mail:1"),
                resolve(PLAIN, EnqueueOptions.builder().idempotencyKey("mail:1").idempotent(true)));
    }

    @Test
    void idempotencyKeyAppliesEvenWhenDerivationIsOff() {
        assertEquals(Optional.of("mail:1"),
                resolve(IDEMPOTENT, EnqueueOptions.builder().idempotencyKey("mail:1").idempotent(false)));
    }

    @Test
    void uniqueKeyBeatsIdempotencyKeyAndDerivation() {
        assertEquals(Optional.of("u-1"), resolve(IDEMPOTENT,
                EnqueueOptions.builder().idempotencyKey("mail:1").uniqueKey("u-1").idempotent(true)));
        assertEquals(Optional.of("u-1"), resolve(PLAIN,
                EnqueueOptions.builder().uniqueKey("u-1").idempotencyKey("mail:1")));
    }

    @Test
    void uniqueKeyAppliesEvenWhenDerivationIsOff() {
        assertEquals(Optional.of("u-1"), resolve(IDEMPOTENT, EnqueueOptions.builder().uniqueKey("u-1").idempotent(false)));
    }

    @Test
    void jobIdIsTheSameAsUniqueKey() {
        assertEquals(Optional.of("u-1"), resolve(PLAIN, EnqueueOptions.builder().jobId("u-1").idempotencyKey("x")));
    }

    @Test
    void derivedKeyDependsOnTaskNameAndPayload() {
        String a = resolve(IDEMPOTENT, EnqueueOptions.builder()).orElseThrow();
        String otherTask = DedupKeys.resolve(Task.of("send_sms", String.class).idempotent(true),
                EnqueueOptions.defaults(), PAYLOAD).orElseThrow();
        String otherPayload = DedupKeys.resolve(IDEMPOTENT, EnqueueOptions.defaults(),
                "{\"to\":\"b@example.com\"}".getBytes(StandardCharsets.UTF_8)).orElseThrow();
        assertNotEquals(a, otherTask);
        assertNotEquals(a, otherPayload);
    }

    @Test
    void taskDefaultIsPerTaskInstance() {
        assertFalse(PLAIN.isIdempotent());
        assertEquals(PLAIN.idempotent(true), IDEMPOTENT);
    }
}
