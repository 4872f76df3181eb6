package io.flexiq;

import io.flexiq.readme.ReadmeSnippets;
import io.flexiq.readme.ReadmeSnippets.Snippet;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every Java snippet of README.md and docs/ compiles as it is, each as a file of its own; each
 * test is named by the snippet's file and line.
 */
class ReadmeSnippetsTest {
    static List<Snippet> snippets() throws Exception {
        return ReadmeSnippets.fenced("java", 13);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("snippets")
    void compiles(Snippet snippet, @TempDir Path dir) throws Exception {
        ReadmeSnippets.assertCompile(List.of(snippet), dir);
    }
}
