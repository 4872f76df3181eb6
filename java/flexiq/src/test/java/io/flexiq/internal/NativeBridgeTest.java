package io.flexiq.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.FlexiQException;
import io.flexiq.NativeLibraryException;
import io.flexiq.PayloadSerializationException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
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
    void severalPayloadsArePutInCanonicalFormInOneCallInTheirOrder() {
        byte[][] canonical = NativeBridge.canonicalJson(new byte[][] {
                "{\"b\":1,\"a\":2}".getBytes(StandardCharsets.UTF_8),
                "[1.0, \"x\"]".getBytes(StandardCharsets.UTF_8),
                "{ }".getBytes(StandardCharsets.UTF_8)});
        assertEquals(3, canonical.length);
        assertEquals("{\"a\":2,\"b\":1}", new String(canonical[0], StandardCharsets.UTF_8));
        assertEquals("[1,\"x\"]", new String(canonical[1], StandardCharsets.UTF_8));
        assertEquals("{}", new String(canonical[2], StandardCharsets.UTF_8));
        assertEquals(0, NativeBridge.canonicalJson(new byte[0][]).length);
    }

    @Test
    void aRefusedPayloadAmongSeveralIsNamedByItsEntry() {
        PayloadSerializationException e = assertThrows(PayloadSerializationException.class,
                () -> NativeBridge.canonicalJson(new byte[][] {
                        "{}".getBytes(StandardCharsets.UTF_8), "{\"a\":".getBytes(StandardCharsets.UTF_8)}));
        assertTrue(e.getMessage().endsWith(" (batch entry 1)"), e.getMessage());
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

    /** The panicking native lives in the test library, in the very shell the shipped natives run in. */
    @Test
    void aPanicBecomesAFlexiQExceptionAndTheJvmCarriesOn() {
        FlexiQException e = assertThrows(FlexiQException.class, () -> PanicProbe.panic("deliberate"));
        assertEquals("native panic: deliberate", e.getMessage());
        assertEquals("auto:", NativeBridge.autoKey("t", new byte[0]).substring(0, 5));
    }

    /**
     * The shipped library exports no {@code Java_…} symbol (its natives are bound in
     * {@code JNI_OnLoad}) and holds no test native; the test library, read the same way, does.
     */
    @Test
    void theShippedLibraryHoldsNoTestNativeAndNoJavaSymbol() throws Exception {
        String shipped = new String(Files.readAllBytes(Paths.get(NativeBridge.loadedFrom())), StandardCharsets.ISO_8859_1);
        assertTrue(shipped.contains("nativeEnqueue"), "the check reads the names of natives");
        assertFalse(shipped.contains("nativePanic"), "the shipped library holds the panic native");
        assertFalse(shipped.contains("Java_io_flexiq"), "the shipped library exports a Java_ symbol");
        String test = new String(Files.readAllBytes(PanicProbe.LIBRARY), StandardCharsets.ISO_8859_1);
        assertTrue(test.contains("nativePanic"), "the test library holds the panic native");
    }

    @Test
    void libraryCameFromTheJarResourceExtractedUnderAHashedName() {
        String from = NativeBridge.loadedFrom();
        assertTrue(from.matches(".*/flexiq-[0-9a-f]{16}-libflexiq_jni\\.so"), from);
    }

    /**
     * Every native has the one shape {@code byte[] name(long, byte[])}, and the library binds
     * exactly the natives this class declares. Only the resolved key (or the request to derive
     * it) crosses, inside the request: no native has a parameter of its own for a flag or a key.
     */
    @Test
    void everyNativeHasTheOneShapeAndTheLibraryBindsExactlyThem() {
        Set<String> declared = new TreeSet<>();
        for (Method m : NativeBridge.class.getDeclaredMethods()) {
            if (!Modifier.isNative(m.getModifiers())) {
                continue;
            }
            declared.add(m.getName());
            assertTrue(Modifier.isStatic(m.getModifiers()), m.getName());
            assertEquals(byte[].class, m.getReturnType(), m.getName());
            assertEquals(List.of(long.class, byte[].class), Arrays.asList(m.getParameterTypes()), m.getName());
        }
        NativeBridge.Description described = NativeBridge.describe();
        assertEquals(declared, new TreeSet<>(described.natives().keySet()));
        for (String signature : described.natives().values()) {
            assertEquals("(J[B)[B", signature);
        }
    }

    /**
     * The Java writer of an enqueue entry is the core's declaration of the job request, field by
     * field: the check before the first enqueue passes, and fails, naming both layouts, on any
     * field missing, added, moved or of another kind.
     */
    @Test
    void theJarWritesAnEnqueueEntryAsTheLibraryDeclaresIt() {
        List<String[]> reads = NativeBridge.describe().enqueueFields();
        assertEquals(EnqueueFields.FIELDS.size(), reads.size());
        EnqueueFields.check(reads);
        List<List<String[]>> drifted = new ArrayList<>();
        drifted.add(new ArrayList<>(reads.subList(0, reads.size() - 1)));
        List<String[]> added = new ArrayList<>(reads);
        added.add(new String[] {"group", "optText"});
        drifted.add(added);
        List<String[]> moved = new ArrayList<>(reads);
        moved.add(0, moved.remove(moved.size() - 1));
        drifted.add(moved);
        List<String[]> retyped = new ArrayList<>(reads);
        retyped.set(0, new String[] {reads.get(0)[0], "optText"});
        drifted.add(retyped);
        for (List<String[]> layout : drifted) {
            NativeLibraryException e = assertThrows(NativeLibraryException.class, () -> EnqueueFields.check(layout));
            assertTrue(e.getMessage().contains("must come from one build"), e.getMessage());
        }
    }
}
