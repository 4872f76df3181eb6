package io.flexiq;

import io.flexiq.readme.ReadmeSnippets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every Java snippet of the README compiles as it is, each as a file of its own. */
class ReadmeSnippetsTest {
    static List<String> snippets() throws Exception {
        return ReadmeSnippets.fenced("java", 5);
    }

    @ParameterizedTest
    @MethodSource("snippets")
    void compiles(String snippet, @TempDir Path dir) throws Exception {
        ReadmeSnippets.assertCompile(List.of(snippet), dir);
    }
}
