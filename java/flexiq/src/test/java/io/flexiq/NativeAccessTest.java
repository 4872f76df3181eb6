package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Java 22 and later warn when a library calls {@code System.load} without native access. The
 * library jar declares {@code Enable-Native-Access: ALL-UNNAMED}, which the JVM honours in the
 * jar it launches; an application on the class path enables it with
 * {@code --enable-native-access=ALL-UNNAMED}, or with the same attribute in its own executable
 * jar. Runs on the newest JDK the machine has beside the default ({@code FLEXIQ_JAVA_NEW}, else
 * the Temurin 25 install); skipped where there is none.
 */
class NativeAccessTest {
    private static final String WARNING = "WARNING: A restricted method in java.lang.System has been called";
    private static final Path LIBRARY_JAR = Paths.get("java/flexiq/build/libs/flexiq-0.1.0.jar");

    static Path newJava() {
        String configured = System.getenv("FLEXIQ_JAVA_NEW");
        Path java = Paths.get(configured != null ? configured : "/usr/lib/jvm/temurin-25-jdk-amd64", "bin", "java");
        assumeTrue(Files.isExecutable(java), "no Java 22+ at " + java);
        return java;
    }

    /** The test class path with the library jar in place of the library's classes and native resources. */
    private static List<String> classPath() {
        List<String> entries = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(entry -> !entry.contains("native-resources") && !entry.matches(".*java/flexiq/build/classes/java/main/?"))
                .collect(Collectors.toCollection(ArrayList::new));
        entries.add(0, LIBRARY_JAR.toAbsolutePath().toString());
        return entries;
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, process.waitFor(), output);
        assertTrue(output.contains("auto:"), "the probe used the native library: " + output);
        return output;
    }

    @Test
    void anExecutableJarWithTheAttributeLoadsTheLibraryWithoutWarning(@TempDir Path dir) throws Exception {
        Path java = newJava();
        assertTrue(Files.isRegularFile(LIBRARY_JAR), "the library jar is built before the tests: " + LIBRARY_JAR);
        Manifest manifest = new Manifest();
        Attributes main = manifest.getMainAttributes();
        main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        main.put(Attributes.Name.MAIN_CLASS, NativeAccessProbe.class.getName());
        main.put(Attributes.Name.CLASS_PATH, classPath().stream()
                .map(entry -> Paths.get(entry).toUri().toString())
                .collect(Collectors.joining(" ")));
        main.putValue("Enable-Native-Access", "ALL-UNNAMED");
        Path app = dir.resolve("app.jar");
        // The manifest is the whole application: its classes come through Class-Path.
        try (OutputStream out = Files.newOutputStream(app)) {
            new JarOutputStream(out, manifest).finish();
        }
        String output = run(List.of(java.toString(), "-jar", app.toString()));
        assertFalse(output.contains("WARNING"), output);
    }

    @Test
    void theLibraryJarDeclaresNativeAccessAndAClassPathRunWantsTheFlag() throws Exception {
        Path java = newJava();
        try (java.util.jar.JarFile jar = new java.util.jar.JarFile(LIBRARY_JAR.toFile())) {
            Attributes main = jar.getManifest().getMainAttributes();
            assertEquals("ALL-UNNAMED", main.getValue("Enable-Native-Access"));
            assertEquals("io.flexiq", main.getValue("Automatic-Module-Name"));
        }
        String cp = String.join(File.pathSeparator, classPath());
        String plain = run(List.of(java.toString(), "-cp", cp, NativeAccessProbe.class.getName()));
        assertTrue(plain.contains(WARNING), "without the flag Java warns, so the checks here can fail: " + plain);
        String enabled = run(List.of(java.toString(), "--enable-native-access=ALL-UNNAMED", "-cp", cp,
                NativeAccessProbe.class.getName()));
        assertFalse(enabled.contains("WARNING"), enabled);
    }
}
