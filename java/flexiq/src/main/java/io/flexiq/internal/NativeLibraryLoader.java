package io.flexiq.internal;

import io.flexiq.NativeLibraryException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds and loads the native library, trying in order: the file named by the system property
 * {@value #PATH_PROPERTY}; the copy inside the jar under {@code io/flexiq/native/<platform>/},
 * extracted under a name that carries its content hash into {@code flexiq-<user name>/} in
 * {@value #TEMP_DIR_PROPERTY} (default {@code java.io.tmpdir}), a directory only the current user
 * can write, or, when that is unusable, into a fresh private directory there; then
 * {@code System.loadLibrary}. An extracted file is loaded only after its full SHA-256 was checked
 * in its final place. When all fail, the exception names the platform (with {@code os.name} and
 * {@code os.arch} as the JVM reports them) and every place tried with what went wrong there, and,
 * when the jar has no library for the platform, how to supply one built elsewhere.
 */
public final class NativeLibraryLoader {
    /** System property naming a library file to load instead of the one in the jar. */
    public static final String PATH_PROPERTY = "flexiq.native.path";
    /** System property naming the folder the jar's library is extracted to. */
    public static final String TEMP_DIR_PROPERTY = "flexiq.native.tmpdir";

    static final String LIBRARY = "flexiq_jni";

    private final Platform platform;
    private final String overridePath;
    private final String resourcePath;
    private final Path extractDir;
    private final String libraryName;

    NativeLibraryLoader(Platform platform, String overridePath, String libraryName, Path extractDir) {
        this.platform = platform;
        this.overridePath = overridePath;
        this.libraryName = libraryName;
        this.resourcePath = resourcePath(platform, libraryName);
        this.extractDir = extractDir;
    }

    /** Where the jar carries the library for {@code platform}. */
    static String resourcePath(Platform platform, String libraryName) {
        return "/io/flexiq/native/" + platform.folder() + "/" + platform.libraryFile(libraryName);
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
        if (overridePath != null) {
            // An explicit override is never silently replaced by another copy.
            try {
                System.load(Paths.get(overridePath).toAbsolutePath().toString());
                return overridePath;
            } catch (UnsatisfiedLinkError | SecurityException e) {
                throw failure(List.of("file " + overridePath + " from -D" + PATH_PROPERTY + ": " + e.getMessage()), "", e);
            }
        }
        Attempts tried = new Attempts();
        tried.lines.add("-D" + PATH_PROPERTY + ": not set");
        String extracted = loadFromJar(tried);
        if (extracted != null) {
            return extracted;
        }
        try {
            System.loadLibrary(libraryName);
            return "java.library.path";
        } catch (UnsatisfiedLinkError | SecurityException e) {
            tried.failed("System.loadLibrary(\"" + libraryName + "\") on java.library.path="
                    + System.getProperty("java.library.path") + ": " + e.getMessage(), e);
        }
        throw failure(tried.lines, tried.remedy, tried.last);
    }

    private NativeLibraryException failure(List<String> tried, String remedy, Throwable cause) {
        return new NativeLibraryException(
                "FlexiQ's native library " + platform.libraryFile(libraryName) + " could not be loaded for platform "
                        + platform + "; tried: " + String.join("; ", tried) + remedy, cause);
    }

    /**
     * Extracts the jar's library into the current user's directory, or if that is unusable into a
     * fresh one, and loads it; returns where from, or null after noting what went wrong where.
     */
    private String loadFromJar(Attempts tried) {
        byte[] bytes;
        try {
            bytes = readResource();
        } catch (IOException e) {
            tried.failed("classpath resource " + resourcePath + ": " + reason(e), e);
            return null;
        }
        if (bytes == null) {
            tried.lines.add("classpath resource " + resourcePath + ": not found");
            tried.remedy = ". This jar carries no library for " + platform.folder() + ": build flexiq-jni for it"
                    + " (cargo build --release -p flexiq-jni in FlexiQ's sources, on such a machine) and name the file"
                    + " with -D" + PATH_PROPERTY + "=<file>, or pack it into the jar as " + resourcePath.substring(1)
                    + " (see \"Native library loading\" in FlexiQ's architecture guide)";
            return null;
        }
        byte[] digest = sha256().digest(bytes);
        String fileName = "flexiq-" + hex(digest, 8) + "-" + platform.libraryFile(libraryName);
        List<ExtractionPlace> places = List.of(
                new ExtractionPlace(extractDir.resolve(PrivateDirectory.sharedName()).toString(),
                        () -> PrivateDirectory.shared(realExtractDir())),
                new ExtractionPlace("a fresh directory in " + extractDir,
                        () -> PrivateDirectory.fresh(realExtractDir())));
        for (ExtractionPlace place : places) {
            try {
                Path extracted = extract(place.directory().open(), fileName, bytes, digest);
                System.load(extracted.toString());
                return extracted.toString();
            } catch (IOException | UnsatisfiedLinkError | SecurityException e) {
                tried.failed("classpath resource " + resourcePath + " extracted to " + place.description() + ": "
                        + reason(e), e);
            }
        }
        return null;
    }

    private byte[] readResource() throws IOException {
        try (InputStream in = NativeLibraryLoader.class.getResourceAsStream(resourcePath)) {
            return in == null ? null : in.readAllBytes();
        }
    }

    private Path realExtractDir() throws IOException {
        Files.createDirectories(extractDir);
        return extractDir.toRealPath();
    }

    /**
     * Leaves the jar's library as {@code fileName} in {@code dir}, reusing a copy already there
     * only if it holds exactly the same bytes, and checks it in its final place: what is loaded
     * is what was checked, since nobody else can change that directory.
     */
    private static Path extract(PrivateDirectory dir, String fileName, byte[] bytes, byte[] digest) throws IOException {
        try {
            checkContent(dir, fileName, digest);
        } catch (IOException absentOrDifferent) {
            dir.write(fileName, bytes);
            checkContent(dir, fileName, digest);
        }
        return dir.path().resolve(fileName);
    }

    private static void checkContent(PrivateDirectory dir, String fileName, byte[] digest) throws IOException {
        MessageDigest sha256 = sha256();
        try (InputStream in = new DigestInputStream(dir.open(fileName), sha256)) {
            in.transferTo(OutputStream.nullOutputStream());
        }
        if (!MessageDigest.isEqual(sha256.digest(), digest)) {
            throw new IOException(dir.path().resolve(fileName) + " does not hold the jar's library (SHA-256 differs)");
        }
    }

    private static String reason(Throwable e) {
        // NIO's file exceptions carry only the path in their message; the type says what went wrong.
        return e instanceof FileSystemException ? e.getClass().getSimpleName() + ": " + e.getMessage() : e.getMessage();
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    private static String hex(byte[] bytes, int count) {
        StringBuilder hex = new StringBuilder();
        for (int i = 0; i < count; i++) {
            hex.append(String.format("%02x", bytes[i]));
        }
        return hex.toString();
    }

    /** Opens a private directory to extract into; may fail with the reason it is unusable. */
    @FunctionalInterface
    private interface DirectoryOpener {
        PrivateDirectory open() throws IOException;
    }

    /** What was tried, in order, the last failure, and what to do when the jar has no library here. */
    private static final class Attempts {
        final List<String> lines = new ArrayList<>();
        Throwable last;
        String remedy = "";

        void failed(String line, Throwable cause) {
            lines.add(line);
            last = cause;
        }
    }

    /** One place the jar's library may be extracted to, as named in the failure message. */
    private record ExtractionPlace(String description, DirectoryOpener directory) {}
}
