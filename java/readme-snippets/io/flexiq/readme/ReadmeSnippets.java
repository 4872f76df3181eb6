package io.flexiq.readme;

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

/**
 * The README's Java snippets, for the modules' snippet tests (a test source folder of each, never
 * in a jar). A snippet is a whole file; its fence names what it compiles against: {@code java}
 * the core, {@code java spring} the starter, {@code java dashboard} the dashboard.
 */
public final class ReadmeSnippets {
    private static final Pattern TOP_LEVEL_TYPE = Pattern.compile(
            "(?m)^(?:@\\w+\\s+(?://.*)?\\n)?(?:public\\s+)?(?:final\\s+)?(?:class|record|interface|enum)\\s+(\\w+)");

    private ReadmeSnippets() {}

    /** The snippets fenced exactly as {@code ```fence}, at least {@code atLeast} of them. */
    public static List<String> fenced(String fence, int atLeast) throws Exception {
        String readme = Files.readString(Paths.get("README.md"), StandardCharsets.UTF_8);
        List<String> found = new ArrayList<>();
        Matcher m = Pattern.compile("```" + Pattern.quote(fence) + "\\n(.*?)```", Pattern.DOTALL).matcher(readme);
        while (m.find()) {
            found.add(m.group(1));
        }
        assertTrue(found.size() >= atLeast, "the README's `" + fence + "` snippets were found: " + found.size());
        return found;
    }

    /** Asserts that these snippets compile together, each as its own file, on the test classpath. */
    public static void assertCompile(List<String> snippets, Path dir) throws Exception {
        List<Path> sources = new ArrayList<>();
        for (String snippet : snippets) {
            Matcher type = TOP_LEVEL_TYPE.matcher(snippet);
            assertTrue(type.find(), "a snippet is a whole file with a top-level type:\n" + snippet);
            Path source = dir.resolve(type.group(1) + ".java");
            Files.writeString(source, snippet);
            sources.add(source);
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "the tests run on a JDK");
        StringWriter errors = new StringWriter();
        try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            Iterable<? extends JavaFileObject> units = files.getJavaFileObjectsFromPaths(sources);
            boolean ok = javac.getTask(errors, files, null,
                    List.of("-classpath", System.getProperty("java.class.path"), "-d", dir.toString(),
                            "-Xlint:all", "-Werror", "-proc:none"),
                    null, units).call();
            assertEquals("", errors.toString(), "javac's report on\n" + String.join("\n", snippets));
            assertTrue(ok, String.join("\n", snippets));
        }
    }
}
