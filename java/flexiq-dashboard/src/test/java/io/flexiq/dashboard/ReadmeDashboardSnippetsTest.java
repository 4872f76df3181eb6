package io.flexiq.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's dashboard snippets (fenced as {@code java dashboard}, which the core's snippet
 * test leaves alone) compile together against this module. Skipped while the README has no
 * Dashboard section.
 */
class ReadmeDashboardSnippetsTest {
    private static final Pattern SNIPPET = Pattern.compile("```java dashboard\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern TOP_LEVEL_TYPE =
            Pattern.compile("(?m)^(?:public\\s+)?(?:final\\s+)?(?:class|record|interface|enum)\\s+(\\w+)");

    @Test
    void compile(@TempDir Path dir) throws Exception {
        String readme = Files.readString(Paths.get("README.md"), StandardCharsets.UTF_8);
        Assumptions.assumeTrue(readme.contains("\n### Dashboard\n"), "the README has no Dashboard section yet");
        List<Path> sources = new ArrayList<>();
        Matcher m = SNIPPET.matcher(readme);
        while (m.find()) {
            String snippet = m.group(1);
            Matcher type = TOP_LEVEL_TYPE.matcher(snippet);
            assertTrue(type.find(), "a snippet is a whole file with a top-level type:\n" + snippet);
            Path source = dir.resolve(type.group(1) + ".java");
            Files.writeString(source, snippet);
            sources.add(source);
        }
        assertTrue(sources.size() >= 2, "the Dashboard section's snippets were found: " + sources.size());
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "the tests run on a JDK");
        StringWriter errors = new StringWriter();
        try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            Iterable<? extends JavaFileObject> units = files.getJavaFileObjectsFromPaths(sources);
            boolean ok = javac.getTask(errors, files, null,
                    List.of("-classpath", System.getProperty("java.class.path"), "-d", dir.toString(),
                            "-Xlint:all", "-Werror", "-proc:none"),
                    null, units).call();
            assertEquals("", errors.toString());
            assertTrue(ok);
        }
    }
}
