package io.flexiq.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flexiq.FlexiQ;
import io.flexiq.test.FlexiQExtension;
import io.flexiq.test.PostgresServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Handler beans on virtual threads when Spring Boot's are on, on a newer JDK (Java 25 here). */
@ExtendWith(FlexiQExtension.class)
class VirtualHandlersTest {
    @ParameterizedTest
    @CsvSource({"true, flexiq-handler-, true", "false, flexiq-worker-, false"})
    void handlersRunOnVirtualThreadsWhenSpringBootsAreOn(boolean enabled, String threadName, boolean virtual,
            PostgresServer postgres, FlexiQ client) throws Exception {
        String configured = System.getenv("FLEXIQ_JAVA_NEW");
        Path java = Paths.get(configured != null ? configured : "/usr/lib/jvm/temurin-25-jdk-amd64", "bin", "java");
        assumeTrue(Files.isExecutable(java), "no Java 21+ at " + java);
        Process child = new ProcessBuilder(List.of(java.toString(), "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), VirtualHandlersChild.class.getName(), postgres.url(),
                client.schema(), Boolean.toString(enabled))).redirectErrorStream(true).start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, child.waitFor(), output);
        assertTrue(output.contains("handler thread: " + threadName), output);
        assertTrue(output.contains("; virtual: " + virtual), output);
    }
}
