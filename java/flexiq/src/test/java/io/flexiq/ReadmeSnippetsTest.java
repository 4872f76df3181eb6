package io.flexiq;

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
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every Java snippet of the README compiles as it is, each as a file of its own. */
class ReadmeSnippetsTest {
    private static final Pattern SNIPPET = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern TOP_LEVEL_TYPE = Pattern.compile("(?m)^(?:@\\w+\\s+(?://.*)?\\n)?(?:public\\s+)?(?:final\\s+)?(?:class|record|interface|enum)\\s+(\\w+)");

    static List<String> snippets() throws Exception {
        String readme = Files.readString(Paths.get("README.md"), StandardCharsets.UTF_8);
        List<String> found = new ArrayList<>();
        Matcher m = SNIPPET.matcher(readme);
        while (m.find()) {
            found.add(m.group(1));
        }
        assertTrue(found.size() >= 5, "the README's Java snippets were found: " + found.size());
        return found;
    }

    @ParameterizedTest
    @MethodSource("snippets")
    void compiles(String snippet, @TempDir Path dir) throws Exception {
        Matcher type = TOP_LEVEL_TYPE.matcher(snippet);
        assertTrue(type.find(), "a snippet is a whole file with a top-level type:\n" + snippet);
        Path source = dir.resolve(type.group(1) + ".java");
        Files.writeString(source, snippet);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "the tests run on a JDK");
        StringWriter errors = new StringWriter();
        try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            Iterable<? extends JavaFileObject> units = files.getJavaFileObjects(source);
            boolean ok = javac.getTask(errors, files, null,
                    List.of("-classpath", System.getProperty("java.class.path"), "-d", dir.toString(),
                            "-Xlint:all", "-Werror", "-proc:none"),
                    null, units).call();
            assertEquals("", errors.toString(), "javac's report on\n" + snippet);
            assertTrue(ok, snippet);
        }
    }
}
