package io.flexiq.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * The Java snippets of the documentation ({@code README.md} and every {@code .md} file under
 * {@code docs/}), for the modules' snippet tests (a test source folder of each, never in a jar).
 * A snippet is a whole file; its fence names what it compiles against: {@code java} the core,
 * {@code java spring} the starter, {@code java dashboard} the dashboard.
 */
public final class ReadmeSnippets {
    private static final Pattern TOP_LEVEL_TYPE = Pattern.compile(
            "(?m)^(?:@\\w+\\s+(?://.*)?\\n)?(?:public\\s+)?(?:final\\s+)?(?:class|record|interface|enum)\\s+(\\w+)");

    private ReadmeSnippets() {}

    /**
     * A snippet and where it is: {@code file} relative to the repository's root, with {@code /}
     * as separator, and {@code line} the line of its opening fence.
     */
    public record Snippet(String file, int line, String text) {
        /** Where the snippet is, as {@code docs/workers.md:12}: what test reports show. */
        @Override
        public String toString() {
            return file + ":" + line;
        }
    }

    /**
     * The Markdown files whose snippets are checked, in a fixed order: {@code README.md}, then
     * every {@code .md} file under {@code docs/}, sorted by path.
     */
    public static List<Path> documents() throws IOException {
        List<Path> documents = new ArrayList<>();
        documents.add(Paths.get("README.md"));
        Path docs = Paths.get("docs");
        if (Files.isDirectory(docs)) {
            try (Stream<Path> walk = Files.walk(docs)) {
                walk.filter(p -> Files.isRegularFile(p) && p.getFileName().toString().endsWith(".md"))
                        .sorted(Comparator.comparing(ReadmeSnippets::name))
                        .forEach(documents::add);
            }
        }
        return documents;
    }

    /**
     * The snippets fenced exactly as {@code ```fence} in the {@linkplain #documents() documents},
     * in their order; fails unless there are at least {@code atLeast} of them.
     */
    public static List<Snippet> fenced(String fence, int atLeast) throws Exception {
        Pattern block = Pattern.compile("```" + Pattern.quote(fence) + "\\n(.*?)```", Pattern.DOTALL);
        List<Snippet> found = new ArrayList<>();
        Map<String, Integer> perFile = new LinkedHashMap<>();
        for (Path document : documents()) {
            String text = Files.readString(document, StandardCharsets.UTF_8);
            Matcher m = block.matcher(text);
            while (m.find()) {
                found.add(new Snippet(name(document), lineOf(text, m.start()), m.group(1)));
                perFile.merge(name(document), 1, Integer::sum);
            }
        }
        assertTrue(found.size() >= atLeast, "`" + fence + "` snippets in README.md and docs/: " + found.size()
                + ", expected at least " + atLeast + "; found per file: " + perFile);
        return found;
    }

    /** Asserts that these snippets compile together, each as its own file, on the test classpath. */
    public static void assertCompile(List<Snippet> snippets, Path dir) throws Exception {
        List<Path> sources = new ArrayList<>();
        Map<String, Snippet> byFile = new LinkedHashMap<>();
        for (Snippet snippet : snippets) {
            Matcher type = TOP_LEVEL_TYPE.matcher(snippet.text());
            assertTrue(type.find(), snippet + ": a snippet is a whole file with a top-level type:\n" + snippet.text());
            String fileName = type.group(1) + ".java";
            Snippet other = byFile.putIfAbsent(fileName, snippet);
            assertTrue(other == null, snippet + " and " + other + " both declare " + type.group(1)
                    + ", and they compile together: rename one");
            Path source = dir.resolve(fileName);
            Files.writeString(source, snippet.text());
            sources.add(source);
        }
        String where = byFile.entrySet().stream()
                .map(e -> e.getKey() + " is the snippet at " + e.getValue())
                .collect(Collectors.joining("\n"));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "the tests run on a JDK");
        StringWriter errors = new StringWriter();
        try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            Iterable<? extends JavaFileObject> units = files.getJavaFileObjectsFromPaths(sources);
            boolean ok = javac.getTask(errors, files, null,
                    List.of("-classpath", System.getProperty("java.class.path"), "-d", dir.toString(),
                            "-Xlint:all", "-Werror", "-proc:none"),
                    null, units).call();
            assertEquals("", errors.toString(), "javac's report on\n" + where);
            assertTrue(ok, "javac failed on\n" + where);
        }
    }

    /** The document's path relative to the repository's root, with {@code /} as separator. */
    private static String name(Path document) {
        return document.normalize().toString().replace('\\', '/');
    }

    /** The 1-based line of the character at {@code offset}. */
    private static int lineOf(String text, int offset) {
        int line = 1;
        for (int i = 0; i < offset; i++) {
            if (text.charAt(i) == '\n') {
                line++;
            }
        }
        return line;
    }
}
