package io.flexiq.internal;

import io.flexiq.NativeLibraryException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Loads the native library in a JVM of its own (a JVM loads it only once), as configured by the
 * system properties it was started with, for {@link NativeLibraryExtractionTest}. Prints
 * {@code loaded <path> <sha256 of that file>} and then the result of one native call (which fails
 * in a library without FlexiQ's entry points), or {@code failed <message>}. Uses no class outside
 * FlexiQ, so that it also runs as another OS user from a copy of the class directories.
 */
public final class LoaderChild {
    private LoaderChild() {}

    /** No arguments: {@code -Dflexiq.native.tmpdir} and friends say where to look. */
    public static void main(String[] args) throws Exception {
        String from;
        try {
            from = NativeBridge.loadedFrom();
        } catch (NativeLibraryException e) {
            System.out.println("failed " + e.getMessage());
            return;
        }
        // Read here: a copy in a fresh directory is removed when this JVM exits.
        System.out.println("loaded " + from + " " + sha256Hex(Files.readAllBytes(Paths.get(from))));
        try {
            byte[] canonical = NativeBridge.canonicalJson("{\"b\":1,\"a\":2}".getBytes(StandardCharsets.UTF_8));
            System.out.println("native call " + new String(canonical, StandardCharsets.UTF_8));
        } catch (UnsatisfiedLinkError e) {
            System.out.println("native call failed: " + e.getMessage());
        }
    }

    static String sha256Hex(byte[] bytes) throws NoSuchAlgorithmException {
        StringBuilder hex = new StringBuilder();
        for (byte b : MessageDigest.getInstance("SHA-256").digest(bytes)) {
            hex.append(String.format("%02x", b));
        }
        return hex.toString();
    }
}
