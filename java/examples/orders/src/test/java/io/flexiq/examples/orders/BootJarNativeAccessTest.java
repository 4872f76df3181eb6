package io.flexiq.examples.orders;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flexiq.FlexiQ;
import io.flexiq.test.FlexiQExtension;
import io.flexiq.test.PostgresServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service as a Spring Boot executable jar ({@link BootJar}), started with {@code java -jar}
 * on Java 22 or later. FlexiQ's own jar declares native access in its manifest, but the JVM
 * reads only the manifest of the jar it launches, so Java warns that "a restricted method in
 * java.lang.System has been called" unless the Boot jar's manifest has
 * {@code Enable-Native-Access: ALL-UNNAMED} or the command line has
 * {@code --enable-native-access=ALL-UNNAMED}, as the README says. Runs on the newest JDK the
 * machine has beside the default ({@code FLEXIQ_JAVA_NEW}, else the Temurin 25 install); skipped
 * where there is none.
 */
@ExtendWith(FlexiQExtension.class)
class BootJarNativeAccessTest {
    private static final String WARNING = "WARNING: A restricted method in java.lang.System has been called";

    @Test
    void theBootJarsManifestAttributeOrTheFlagSilencesJavasNativeAccessWarning(PostgresServer postgres,
            @TempDir Path dir) throws Exception {
        Path java = newJava();
        Path plain = BootJar.write(dir.resolve("orders.jar"), Map.of());
        Path declared = BootJar.write(dir.resolve("orders-native-access.jar"),
                Map.of("Enable-Native-Access", "ALL-UNNAMED"));
        String schema = "orders_jar_" + UUID.randomUUID().toString().substring(0, 8);
        try {
            String warned = start(java, postgres, schema, "-jar", plain.toString());
            assertTrue(warned.contains(WARNING), "without either, Java warns, so the checks below can fail: " + warned);
            String attribute = start(java, postgres, schema, "-jar", declared.toString());
            assertFalse(attribute.contains("restricted method"), attribute);
            String flag = start(java, postgres, schema, "--enable-native-access=ALL-UNNAMED", "-jar", plain.toString());
            assertFalse(flag.contains("restricted method"), flag);
        } finally {
            try (FlexiQ client = FlexiQ.builder(postgres.url()).schema(schema).build()) {
                client.dropSchema();
            }
        }
    }

    private static Path newJava() {
        String configured = System.getenv("FLEXIQ_JAVA_NEW");
        Path java = Paths.get(configured != null ? configured : "/usr/lib/jvm/temurin-25-jdk-amd64", "bin", "java");
        assumeTrue(Files.isExecutable(java), "no Java 22+ at " + java);
        return java;
    }

    /** Starts the jar, waits until the service is up, stops it and returns what it printed. */
    private static String start(Path java, PostgresServer postgres, String schema, String... launch) throws Exception {
        List<String> command = new ArrayList<>(List.of(java.toString()));
        command.addAll(List.of(launch));
        command.addAll(List.of("--server.port=0", "--spring.datasource.url=" + postgres.jdbcUrl(),
                "--flexiq.schema=" + schema));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        StringBuffer output = new StringBuffer();
        CountDownLatch startedOrEnded = new CountDownLatch(1);
        Thread reader = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    output.append(line).append('\n');
                    if (line.contains("Started OrdersApplication")) {
                        startedOrEnded.countDown();
                    }
                }
            } catch (IOException e) {
                output.append(e).append('\n');
            }
            startedOrEnded.countDown();
        }, "orders-jar-output");
        reader.start();
        try {
            startedOrEnded.await(120, TimeUnit.SECONDS);
            assertTrue(output.toString().contains("Started OrdersApplication"), "the service started: " + output);
        } finally {
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
            reader.join();
        }
        return output.toString();
    }
}
