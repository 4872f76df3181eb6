package io.flexiq.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library binds its natives when it loads: a bridge class that does not declare them as the
 * library has them fails at {@code System.load}, naming the method, instead of at a first call.
 * Each case loads the genuine library in a JVM of its own (a JVM loads it only once) with a
 * stand-in {@code NativeBridge} compiled here.
 */
class NativeRegistrationTest {
    @Test
    void aBridgeThatDeclaresEveryNativeInTheOneShapeLoads(@TempDir Path tmp) throws Exception {
        StringBuilder natives = new StringBuilder();
        for (String name : NativeBridge.describe().natives().keySet()) {
            natives.append("    private static native byte[] ").append(name).append("(long handle, byte[] request);\n");
        }
        assertEquals("loaded", loadWith(tmp, natives.toString()));
    }

    @Test
    void aNativeDeclaredWithAnotherSignatureFailsTheLoadNamingIt(@TempDir Path tmp) throws Exception {
        StringBuilder natives = new StringBuilder();
        for (String name : NativeBridge.describe().natives().keySet()) {
            String parameters = name.equals("nativeEnqueue") ? "long handle, String request" : "long handle, byte[] request";
            natives.append("    private static native byte[] ").append(name).append("(").append(parameters).append(");\n");
        }
        String output = loadWith(tmp, natives.toString());
        assertTrue(output.startsWith("failed FlexiQ's native library does not fit the Java class "
                + "io.flexiq.internal.NativeBridge: "), output);
        assertTrue(output.contains("nativeEnqueue"), output);
        assertTrue(output.contains("come from different builds"), output);
    }

    /** Compiles a {@code NativeBridge} with these natives, loads the library with it, returns what it printed. */
    private static String loadWith(Path tmp, String natives) throws Exception {
        Path source = tmp.resolve("src/io/flexiq/internal/NativeBridge.java");
        Files.createDirectories(source.getParent());
        Files.write(source, ("package io.flexiq.internal;\n"
                + "public final class NativeBridge {\n"
                + natives
                + "    public static void main(String[] args) {\n"
                + "        try {\n"
                + "            System.load(args[0]);\n"
                + "            System.out.print(\"loaded\");\n"
                + "        } catch (UnsatisfiedLinkError e) {\n"
                + "            System.out.print(\"failed \" + e.getMessage());\n"
                + "        }\n"
                + "    }\n"
                + "}\n").getBytes(StandardCharsets.UTF_8));
        Path classes = tmp.resolve("classes");
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertEquals(0, javac.run(null, null, null, "-d", classes.toString(), source.toString()), "javac");
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(java.toString(), "-Xcheck:jni", "-cp", classes.toString(),
                "io.flexiq.internal.NativeBridge", NativeBridge.loadedFrom())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = child.getInputStream()) {
            in.transferTo(out);
        }
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "child JVM exits");
        return out.toString(StandardCharsets.UTF_8);
    }
}
