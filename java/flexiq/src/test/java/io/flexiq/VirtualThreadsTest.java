package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Handlers on virtual threads, through {@link Worker.Builder#handlerThreads}, on Java 25. */
class VirtualThreadsTest {
    @Test
    void aThousandSleepingHandlersRunAtOnceOnVirtualThreads() throws Exception {
        Path java = NativeAccessTest.newJava();
        Process child = new ProcessBuilder(List.of(java.toString(), "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), VirtualThreadsChild.class.getName(), TestDatabase.url(),
                TestDatabase.freshSchema())).redirectErrorStream(true).start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, child.waitFor(), output);
        Matcher m = Pattern.compile("asleep at once: (\\d+); on virtual threads: (\\d+); platform threads: (\\d+)")
                .matcher(output);
        assertTrue(m.find(), output);
        assertEquals(1_000, Integer.parseInt(m.group(1)), output);
        assertEquals(1_000, Integer.parseInt(m.group(2)), output);
        // A thousand platform threads would show here; virtual ones share a few carriers.
        assertTrue(Integer.parseInt(m.group(3)) < 100, output);
    }
}
