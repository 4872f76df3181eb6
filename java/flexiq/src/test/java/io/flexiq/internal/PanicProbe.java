package io.flexiq.internal;

import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The natives of the test library ({@code native/flexiq-jni-test}, built into target/release
 * beside the shipped one), which run in the same shell as the shipped natives. The shipped
 * library holds no test native.
 */
final class PanicProbe {
    /** The test library; tests run from the root of the build. */
    static final Path LIBRARY = Paths.get("target", "release", System.mapLibraryName("flexiq_jni_test")).toAbsolutePath();

    static {
        System.load(LIBRARY.toString());
    }

    private PanicProbe() {}

    /** Panics inside native code with {@code message}. */
    static void panic(String message) {
        nativePanic(0, new Wire.Writer(16).text(message).toBytes());
    }

    private static native byte[] nativePanic(long none, byte[] request);
}
