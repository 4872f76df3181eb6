package io.flexiq.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.FlexiQException;
import io.flexiq.PayloadSerializationException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/** Errors crossing JNI arrive as typed Java exceptions; a Rust panic never crashes the JVM. */
class NativeBridgeTest {
    @Test
    void coreValidationErrorsBecomeIllegalArgumentException() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NativeBridge.autoKey("a\0b", new byte[0]));
        assertEquals("task name must not contain a NUL character (found at byte 1)", e.getMessage());
    }

    @Test
    void nullArgumentsBecomeIllegalArgumentException() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NativeBridge.autoKey(null, new byte[0]));
        assertEquals("taskName must not be null", e.getMessage());
    }

    @Test
    void invalidJsonBecomesPayloadSerializationException() {
        PayloadSerializationException e = assertThrows(PayloadSerializationException.class,
                () -> NativeBridge.canonicalJson("{\"a\":".getBytes(StandardCharsets.UTF_8)));
        assertTrue(e.getMessage().startsWith("payload is not serializable as canonical JSON: "), e.getMessage());
    }

    @Test
    void repeatedMemberNamesAreRefused() {
        PayloadSerializationException e = assertThrows(PayloadSerializationException.class,
                () -> NativeBridge.canonicalJson("{\"a\":1,\"a\":2}".getBytes(StandardCharsets.UTF_8)));
        assertTrue(e.getMessage().contains("member name \"a\" appears twice in the object at $;"), e.getMessage());
    }

    /**
     * A string that is not valid UTF-16 is refused where it crosses, whatever called: converted
     * with replacement characters, "t\uDC00" and "t\uDFFF" used to derive one key.
     */
    @Test
    void stringsThatAreNotValidUtf16AreRefusedAtTheBoundary() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NativeBridge.autoKey("t\uDC00", new byte[0]));
        assertEquals("taskName is not valid UTF-16: it holds an unpaired surrogate", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> NativeBridge.autoKey("t\uDFFF", new byte[0]));
        assertTrue(NativeBridge.autoKey("t\uD83D\uDE00", new byte[0]).startsWith("auto:"));
    }

    @Test
    void numbersACanonicalDoubleWouldChangeAreRefusedNamingThePath() {
        PayloadSerializationException e = assertThrows(PayloadSerializationException.class,
                () -> NativeBridge.canonicalJson("{\"order\":{\"amount\":1234567890123456789}}"
                        .getBytes(StandardCharsets.UTF_8)));
        assertTrue(e.getMessage().contains("the integer 1234567890123456789 at $.order.amount is beyond 2^53"),
                e.getMessage());
    }

    @Test
    void aPanicBecomesAFlexiQExceptionAndTheJvmCarriesOn() {
        FlexiQException e = assertThrows(FlexiQException.class, () -> NativeBridge.panicForTest("deliberate"));
        assertEquals("native panic: deliberate", e.getMessage());
        assertEquals("auto:", NativeBridge.autoKey("t", new byte[0]).substring(0, 5));
    }

    @Test
    void libraryCameFromTheJarResourceExtractedUnderAHashedName() {
        String from = NativeBridge.loadedFrom();
        assertTrue(from.matches(".*/flexiq-[0-9a-f]{16}-libflexiq_jni\\.so"), from);
    }

    /** Only the resolved key crosses JNI: no native method can receive the inputs it came from. */
    @Test
    void noNativeMethodTakesTheIdempotentFlagOrTheIdempotencyKey() {
        List<String> natives = new ArrayList<>();
        Method enqueue = null;
        for (Method m : NativeBridge.class.getDeclaredMethods()) {
            if (!Modifier.isNative(m.getModifiers())) {
                continue;
            }
            natives.add(m.getName());
            if (m.getName().equals("nativeEnqueue")) {
                enqueue = m;
            }
            for (Parameter p : m.getParameters()) {
                assertTrue(p.isNamePresent(), "compile with -parameters so this test can read names");
                String name = p.getName().toLowerCase(Locale.ROOT);
                assertTrue(!name.contains("idempoten"), m.getName() + " takes " + p.getName());
            }
        }
        assertTrue(natives.contains("nativeAutoKey"), natives.toString());
        assertTrue(enqueue != null, "nativeEnqueue exists: " + natives);
        List<String> keyParameters = new ArrayList<>();
        for (Parameter p : enqueue.getParameters()) {
            assertTrue(p.getType() != boolean.class && p.getType() != boolean[].class,
                    "nativeEnqueue takes a flag: " + p.getName());
            if (p.getName().toLowerCase(Locale.ROOT).contains("key") && !p.getName().contains("Retention")) {
                keyParameters.add(p.getName());
            }
        }
        assertEquals(List.of("resolvedKeys"), keyParameters);
    }
}
