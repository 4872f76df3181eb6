package io.flexiq.internal.enqueue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.flexiq.EnqueueOptions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How long a key stays bound, by the kind of key picked; KeyRetentionTest checks it in PostgreSQL. */
class KeyRulesTest {
    private static final Duration HOUR = Duration.ofHours(1);

    @Test
    void theRetentionFollowsTheKindOfKey() {
        Duration day = EnqueueOptions.DEFAULT_IDEMPOTENCY_KEY_RETENTION;
        assertEquals(Duration.ofHours(24), day);
        EnqueueOptions idempotency = EnqueueOptions.builder().idempotencyKey("i").build();
        EnqueueOptions unique = EnqueueOptions.builder().uniqueKey("u").build();
        EnqueueOptions both = EnqueueOptions.builder().idempotencyKey("i").uniqueKey("u").build();
        EnqueueOptions none = EnqueueOptions.defaults();

        assertEquals(day, KeyRules.retentionOrNull(idempotency, false, null));
        assertEquals(HOUR, KeyRules.retentionOrNull(idempotency, false, HOUR));
        assertNull(KeyRules.retentionOrNull(unique, false, null));
        assertEquals(HOUR, KeyRules.retentionOrNull(unique, false, HOUR));
        assertNull(KeyRules.retentionOrNull(both, false, null), "a uniqueKey wins, and its kind with it");
        assertNull(KeyRules.retentionOrNull(none, true, null), "derived");
        assertNull(KeyRules.retentionOrNull(none, true, HOUR), "derived keys ignore the client's default");
        assertNull(KeyRules.retentionOrNull(none, false, HOUR), "no key, no retention");

        Duration asked = Duration.ofMinutes(5);
        for (EnqueueOptions.Builder b : List.of(EnqueueOptions.builder().idempotencyKey("i"),
                EnqueueOptions.builder().uniqueKey("u"))) {
            assertEquals(asked, KeyRules.retentionOrNull(b.keyRetention(asked).build(), false, HOUR));
        }
        EnqueueOptions derivedAsked = EnqueueOptions.builder().keyRetention(asked).build();
        assertEquals(asked, KeyRules.retentionOrNull(derivedAsked, true, null));
        assertNull(KeyRules.retentionOrNull(derivedAsked, false, null), "no key, no retention, whatever the call asks");
    }
}
