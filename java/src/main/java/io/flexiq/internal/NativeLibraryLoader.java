package io.flexiq.internal;

import io.flexiq.NativeLibraryException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds and loads the native library, trying in order: the file named by the system property
 * {@value #PATH_PROPERTY}; the copy inside the jar under {@code io/flexiq/native/<platform>/},
 * extracted to {@value #TEMP_DIR_PROPERTY} (default {@code java.io.tmpdir}) under a name that
 * carries its content hash; then {@code System.loadLibrary}. When all fail, the exception names
 * the platform and every place tried with what went wrong there.
 */
public final class NativeLibraryLoader {
    /** System property naming a library file to load instead of the one in the jar. */
    public static final String PATH_PROPERTY = "flexiq.native.path";
    /** System property naming the folder the jar's library is extracted to. */
    public static final String TEMP_DIR_PROPERTY = "flexiq.native.tmpdir";

    static final String LIBRARY = "flexiq_jni";

    private final String platform;
    private final String overridePath;
    private final String resourcePath;
    private final Path extractDir;
    private final String libraryName;

    NativeLibraryLoader(String platform, String overridePath, String libraryName, Path extractDir) {
        this.platform = platform;
        this.overridePath = overridePath;
        this.libraryName = libraryName;
        this.resourcePath = "/io/flexiq/native/" + platform + "/" + System.mapLibraryName(libraryName);
        this.extractDir = extractDir;
    }

    /** A loader configured from system properties for the running platform. */
    static NativeLibraryLoader fromSystemProperties() {
        return new NativeLibraryLoader(
                Platform.current(),
                System.getProperty(PATH_PROPERTY),
                LIBRARY,
                Paths.get(System.getProperty(TEMP_DIR_PROPERTY, System.getProperty("java.io.tmpdir"))));
    }

    /**
     * Loads the library, or throws naming everything tried.
     *
     * @return where the library was loaded from
     */
    String load() {
        List<String> tried = new ArrayList<>();
        Throwable last = null;
        if (overridePath != null) {
            // An explicit override is never silently replaced by another copy.
            try {
                System.load(Paths.get(overridePath).toAbsolutePath().toString());
                return overridePath;
            } catch (UnsatisfiedLinkError | SecurityException e) {
                throw failure(List.of("file " + overridePath + " from -D" + PATH_PROPERTY + ": " + e.getMessage()), e);
            }
        }
        tried.add("-D" + PATH_PROPERTY + ": not set");
        try {
            Path extracted = extractFromJar();
            if (extracted == null) {
                tried.add("classpath resource " + resourcePath + ": not found");
            } else {
                System.load(extracted.toString());
                return extracted.toString();
            }
        } catch (IOException | UnsatisfiedLinkError | SecurityException e) {
            tried.add("classpath resource " + resourcePath + ": " + e.getMessage());
            last = e;
        }
        try {
            System.loadLibrary(libraryName);
            return "java.library.path";
        } catch (UnsatisfiedLinkError | SecurityException e) {
            tried.add("System.loadLibrary(\"" + libraryName + "\") on java.library.path="
                    + System.getProperty("java.library.path") + ": " + e.getMessage());
            last = e;
        }
        throw failure(tried, last);
    }

    private NativeLibraryException failure(List<String> tried, Throwable cause) {
        return new NativeLibraryException(
                "FlexiQ's native library " + System.mapLibraryName(libraryName) + " could not be loaded for platform "
                        + platform + "; tried: " + String.join("; ", tried), cause);
    }

    private Path extractFromJar() throws IOException {
        byte[] bytes;
        try (InputStream in = NativeLibraryLoader.class.getResourceAsStream(resourcePath)) {
            if (in == null) {
                return null;
            }
            bytes = in.readAllBytes();
        }
        Path target = extractDir.resolve("flexiq-" + sha256Prefix(bytes) + "-" + System.mapLibraryName(libraryName));
        if (Files.isRegularFile(target) && Files.size(target) == bytes.length) {
            return target;
        }
        Files.createDirectories(extractDir);
        // Write aside, then rename: concurrent JVMs never load a half-written file.
        Path partial = Files.createTempFile(extractDir, "flexiq-", ".partial");
        try {
            Files.write(partial, bytes);
            Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(partial);
        }
        return target;
    }

    private static String sha256Prefix(byte[] bytes) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(bytes);
            StringBuilder hex = new StringBuilder();
            for (int i = 0; i < 8; i++) {
                hex.append(String.format("%02x", digest[i]));
            }
            return hex.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
