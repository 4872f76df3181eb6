package io.flexiq.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.security.NoSuchAlgorithmException;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jar's library is extracted into a directory only the current user can write and loaded only
 * after its content was checked there. Each case plants a library of another user's making (its
 * constructor writes a marker file) where the loader looks, loads in a child JVM, and checks that
 * the genuine library was loaded, or that loading failed with a clear message, and that the
 * planted one never ran. Planting as "another user" chowns to the {@code postgres} OS user.
 */
class NativeLibraryExtractionTest {
    private static final String LIBRARY_FILE = System.mapLibraryName(NativeLibraryLoader.LIBRARY);
    /** What {@link LoaderChild} prints after calling into the genuine library. */
    private static final String NATIVE_CALL = "native call {\"a\":2,\"b\":1}";

    @TempDir
    Path tmp;
    private Path extractDir;
    private Path attackerDir;
    private Path marker;
    private Path planted;
    private byte[] genuine;
    private String genuineSha;
    private String fileName;
    private Path userDir;

    @BeforeEach
    void plantLibrary() throws Exception {
        assumeTrue(tmp.getFileSystem().supportedFileAttributeViews().contains("unix"), "a POSIX file system");
        try (InputStream in = NativeLibraryExtractionTest.class.getResourceAsStream(
                NativeLibraryLoader.resourcePath(Platform.current(), NativeLibraryLoader.LIBRARY))) {
            genuine = in.readAllBytes();
        }
        genuineSha = sha256Hex(genuine);
        fileName = "flexiq-" + genuineSha.substring(0, 16) + "-" + LIBRARY_FILE;
        extractDir = Files.createDirectory(tmp.resolve("extract"));
        userDir = extractDir.resolve("flexiq-" + System.getProperty("user.name"));
        attackerDir = Files.createDirectory(tmp.resolve("attacker"));
        marker = tmp.resolve("planted-library-ran");
        planted = compilePlantedLibrary(attackerDir.resolve("planted.so"), marker, genuine.length);
    }

    @AfterEach
    void plantedLibraryNeverRan() {
        assertFalse(Files.exists(marker), "the planted library's constructor ran");
    }

    @Test
    void plantedLibraryRunsItsConstructorWhenLoaded() throws Exception {
        // Proves the marker works, so that its absence elsewhere means something.
        List<String> output = run(extractDir, "-D" + NativeLibraryLoader.PATH_PROPERTY + "=" + planted);
        assertEquals("loaded " + planted + " " + sha256Hex(Files.readAllBytes(planted)), output.get(0));
        assertTrue(output.get(1).startsWith("native call failed"), output.toString());
        assertTrue(Files.exists(marker), "marker written by the planted library");
        Files.delete(marker);
    }

    @Test
    void extractsIntoAnOwnerOnlyDirectoryAndReusesTheCheckedCopy() throws Exception {
        assertLoadedGenuine(run(extractDir), userDir.resolve(fileName));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(userDir, LinkOption.NOFOLLOW_LINKS)));
        Object inode = Files.getAttribute(userDir.resolve(fileName), "unix:ino");
        assertLoadedGenuine(run(extractDir), userDir.resolve(fileName));
        assertEquals(inode, Files.getAttribute(userDir.resolve(fileName), "unix:ino"), "the checked copy was reused");
    }

    @Test
    void plantedSameSizeFilesAreNeverLoaded() throws Exception {
        // At the name older versions used, and at the name used now (as if the user's own copy were damaged).
        Files.copy(planted, extractDir.resolve(fileName));
        Files.createDirectory(userDir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Files.copy(planted, userDir.resolve(fileName));
        assertLoadedGenuine(run(extractDir), userDir.resolve(fileName));
        assertArrayEquals(genuine, Files.readAllBytes(userDir.resolve(fileName)));
    }

    @Test
    void plantedSymlinksToALibraryAreNeverFollowed() throws Exception {
        Files.createSymbolicLink(extractDir.resolve(fileName), planted);
        Files.createDirectory(userDir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Files.createSymbolicLink(userDir.resolve(fileName), planted);
        assertLoadedGenuine(run(extractDir), userDir.resolve(fileName));
        assertFalse(Files.isSymbolicLink(userDir.resolve(fileName)), "the link was replaced by a file");
        assertEquals(genuine.length, Files.size(planted));
        assertNotEquals(genuineSha, sha256Hex(Files.readAllBytes(planted)), "the planted file was not written through");
    }

    @Test
    void symlinkInPlaceOfTheUserDirectoryIsRefused() throws Exception {
        Files.copy(planted, attackerDir.resolve(fileName));
        Files.createSymbolicLink(userDir, attackerDir);
        List<String> before = names(attackerDir);
        assertLoadedFromFreshDirectory(run(extractDir));
        assertEquals(before, names(attackerDir), "nothing written through the link");
        assertArrayEquals(Files.readAllBytes(planted), Files.readAllBytes(attackerDir.resolve(fileName)));
    }

    @Test
    void userDirectoryOwnedByAnotherUserIsRefused() throws Exception {
        Files.createDirectory(userDir);
        Files.setPosixFilePermissions(userDir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.copy(planted, userDir.resolve(fileName));
        chownToPostgres(userDir.resolve(fileName));
        chownToPostgres(userDir);
        assertLoadedFromFreshDirectory(run(extractDir));
    }

    @Test
    void userDirectoryWritableByOthersIsRefused() throws Exception {
        Files.createDirectory(userDir);
        Files.setPosixFilePermissions(userDir, PosixFilePermissions.fromString("rwxrwxrwx"));
        Files.copy(planted, userDir.resolve(fileName));
        assertLoadedFromFreshDirectory(run(extractDir));
    }

    @Test
    void readOnlyLeftoverOfAnotherUserIsReplaced() throws Exception {
        Files.createDirectory(userDir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        for (Path leftover : List.of(extractDir.resolve(fileName), userDir.resolve(fileName))) {
            Files.copy(planted, leftover);
            Files.setPosixFilePermissions(leftover, PosixFilePermissions.fromString("r--------"));
            chownToPostgres(leftover);
        }
        assertLoadedGenuine(run(extractDir), userDir.resolve(fileName));
        assertEquals(System.getProperty("user.name"), Files.getOwner(userDir.resolve(fileName)).getName());
    }

    @Test
    void leftoversOfAnotherUserDoNotStopThisUser() throws Exception {
        // Root's unreadable copies where postgres would look, in a shared directory like /tmp; postgres loads.
        assumeTrue("root".equals(System.getProperty("user.name")), "running as another user needs root");
        String classPath = readableClassPath();
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setAttribute(extractDir, "unix:mode", 01777);
        Path postgresDir = Files.createDirectory(extractDir.resolve("flexiq-postgres"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        for (Path leftover : List.of(extractDir.resolve(fileName), postgresDir.resolve(fileName))) {
            Files.copy(planted, leftover);
            Files.setPosixFilePermissions(leftover, PosixFilePermissions.fromString("rw-------"));
        }
        List<String> output = run(List.of("runuser", "-u", "postgres", "--"), classPath, extractDir);
        assertLoadedFromFreshDirectory(output);
    }

    @Test
    void extractDirectoryOwnedByAnotherUserEndsInAClearException() throws Exception {
        Files.copy(planted, extractDir.resolve(fileName));
        Files.setPosixFilePermissions(extractDir, PosixFilePermissions.fromString("rwxr-xr-x"));
        chownToPostgres(extractDir);
        String failure = failure(run(extractDir));
        String why = extractDir + " belongs to postgres, who could swap the directories in it";
        assertTrue(failure.contains("extracted to " + userDir + ": " + why), failure);
        assertTrue(failure.contains("extracted to a fresh directory in " + extractDir + ": " + why), failure);
        assertEquals(List.of(fileName), names(extractDir), "no directory left behind");
    }

    @Test
    void extractDirectoryWritableByOthersNeedsTheStickyBit() throws Exception {
        Files.setPosixFilePermissions(extractDir, PosixFilePermissions.fromString("rwxrwxrwx"));
        String failure = failure(run(extractDir));
        String why = extractDir + " is writable by group or others without the sticky bit (mode 777)";
        assertTrue(failure.contains("extracted to " + userDir + ": " + why), failure);
        assertTrue(failure.contains("extracted to a fresh directory in " + extractDir + ": " + why), failure);

        Files.setAttribute(extractDir, "unix:mode", 01777); // as /tmp is
        assertLoadedGenuine(run(extractDir), userDir.resolve(fileName));
    }

    private void assertLoadedGenuine(List<String> output, Path expected) {
        assertEquals(List.of("loaded " + expected + " " + genuineSha, NATIVE_CALL), output);
    }

    private void assertLoadedFromFreshDirectory(List<String> output) {
        assertEquals(2, output.size(), output.toString());
        assertEquals(NATIVE_CALL, output.get(1));
        String[] loaded = output.get(0).split(" ");
        assertEquals("loaded", loaded[0], output.toString());
        Path from = Paths.get(loaded[1]);
        assertEquals(extractDir, from.getParent().getParent(), "loaded from a directory in " + extractDir);
        assertTrue(from.getParent().getFileName().toString().startsWith("flexiq-"), from.toString());
        assertNotEquals(userDir, from.getParent());
        assertEquals(fileName, from.getFileName().toString());
        assertEquals(genuineSha, loaded[2], "loaded the genuine library");
        assertFalse(Files.exists(from.getParent()), "the fresh directory is removed at exit");
    }

    private static String failure(List<String> output) {
        assertEquals(1, output.size(), output.toString());
        assertTrue(output.get(0).startsWith("failed FlexiQ's native library " + LIBRARY_FILE + " could not be loaded"),
                output.get(0));
        return output.get(0);
    }

    private static List<String> run(Path extractDir, String... jvmArgs) throws Exception {
        return run(List.of(), System.getProperty("java.class.path"), extractDir, jvmArgs);
    }

    /** Runs {@link LoaderChild} after the command words {@code asUser} (empty: as ourselves). */
    private static List<String> run(List<String> asUser, String classPath, Path extractDir, String... jvmArgs)
            throws Exception {
        List<String> command = new ArrayList<>(asUser);
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(Arrays.asList(jvmArgs));
        command.addAll(List.of("-D" + NativeLibraryLoader.TEMP_DIR_PROPERTY + "=" + extractDir,
                "-cp", classPath, LoaderChild.class.getName()));
        Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "child JVM finished");
        return out.isEmpty() ? List.of() : List.of(out.split("\n"));
    }

    /** A copy of the class path's directories that every user can read, as a class path. */
    private String readableClassPath() throws IOException {
        List<String> copies = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path source = Paths.get(entry);
            if (!Files.isDirectory(source)) {
                continue; // jars of test libraries: LoaderChild needs none
            }
            Path copy = tmp.resolve("classpath-" + copies.size());
            try (Stream<Path> tree = Files.walk(source)) {
                for (Path from : (Iterable<Path>) tree::iterator) {
                    Path to = copy.resolve(source.relativize(from).toString());
                    Files.copy(from, to);
                    Files.setPosixFilePermissions(to, PosixFilePermissions.fromString(Files.isDirectory(to) ? "rwxr-xr-x" : "rw-r--r--"));
                }
            }
            copies.add(copy.toString());
        }
        return String.join(File.pathSeparator, copies);
    }

    /**
     * Builds a shared library whose constructor writes {@code marker}, padded with zeros to
     * {@code size} bytes: the size of the genuine library, which older versions took as proof.
     */
    private static Path compilePlantedLibrary(Path library, Path marker, int size) throws Exception {
        Path source = library.resolveSibling("planted.c");
        Files.write(source, ("#include <stdio.h>\n"
                + "__attribute__((constructor)) static void planted(void) {\n"
                + "    FILE *f = fopen(\"" + marker + "\", \"w\");\n"
                + "    if (f) { fputs(\"planted library ran\\n\", f); fclose(f); }\n"
                + "}\n").getBytes(StandardCharsets.UTF_8));
        Process cc = new ProcessBuilder("cc", "-shared", "-fPIC", "-o", library.toString(), source.toString())
                .inheritIO().start();
        assertTrue(cc.waitFor(60, TimeUnit.SECONDS) && cc.exitValue() == 0, "cc built the planted library");
        byte[] built = Files.readAllBytes(library);
        assertTrue(built.length < size, "planted library fits in the genuine one's size");
        Files.write(library, Arrays.copyOf(built, size));
        return library;
    }

    private static void chownToPostgres(Path path) throws IOException {
        assumeTrue("root".equals(System.getProperty("user.name")), "giving files to another user needs root");
        UserPrincipal postgres = path.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres");
        Files.setOwner(path, postgres);
    }

    private static List<String> names(Path dir) throws IOException {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        }
    }

    private static String sha256Hex(byte[] bytes) throws NoSuchAlgorithmException {
        return LoaderChild.sha256Hex(bytes);
    }
}
