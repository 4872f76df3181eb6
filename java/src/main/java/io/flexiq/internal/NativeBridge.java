package io.flexiq.internal;

import io.flexiq.NativeLibraryException;

/**
 * Every native entry point of FlexiQ, and nothing else. Loading happens once, at first use; a
 * loading failure is kept and thrown again from every later call.
 *
 * <p>Not part of the public API: callers go through {@code io.flexiq}, which validates arguments
 * and resolves dedup keys before calling here. No native method takes the {@code idempotent}
 * flag or the {@code idempotencyKey}: only the resolved key crosses.
 */
public final class NativeBridge {
    private static String loadedFrom;
    private static final NativeLibraryException LOAD_FAILURE = load();

    private NativeBridge() {}

    private static NativeLibraryException load() {
        try {
            loadedFrom = NativeLibraryLoader.fromSystemProperties().load();
            return null;
        } catch (NativeLibraryException e) {
            return e;
        }
    }

    /** Where the native library was loaded from. */
    public static String loadedFrom() {
        ensureLoaded();
        return loadedFrom;
    }

    /** Throws the kept loading failure, if there was one. */
    public static void ensureLoaded() {
        if (LOAD_FAILURE != null) {
            throw new NativeLibraryException(LOAD_FAILURE.getMessage(), LOAD_FAILURE);
        }
    }

    /** RFC 8785 canonical form of a JSON text. */
    public static byte[] canonicalJson(byte[] json) {
        ensureLoaded();
        return nativeCanonicalJson(json);
    }

    /** The auto-derived key of a task name and serialized payload. */
    public static String autoKey(String taskName, byte[] payload) {
        ensureLoaded();
        return nativeAutoKey(taskName, payload);
    }

    /**
     * Panics inside native code with {@code message}. Exists so that tests can prove the panic
     * barrier: the call must end in a {@code FlexiQException}, never in a crashed JVM.
     */
    public static void panicForTest(String message) {
        ensureLoaded();
        nativePanicForTest(message);
    }

    private static native void nativePanicForTest(String message);

    private static native byte[] nativeCanonicalJson(byte[] json);

    private static native String nativeAutoKey(String taskName, byte[] payload);
}
