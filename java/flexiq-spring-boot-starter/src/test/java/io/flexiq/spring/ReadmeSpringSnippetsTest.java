package io.flexiq.spring;

import io.flexiq.readme.ReadmeSnippets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Spring snippets of README.md and docs/ (fenced as {@code java spring}, which the core's
 * snippet test leaves alone) compile together against the starter.
 */
class ReadmeSpringSnippetsTest {
    @Test
    void compile(@TempDir Path dir) throws Exception {
        ReadmeSnippets.assertCompile(ReadmeSnippets.fenced("java spring", 3), dir);
    }
}
