package io.flexiq.dashboard;

import io.flexiq.readme.ReadmeSnippets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dashboard snippets of README.md and docs/ (fenced as {@code java dashboard}, which the
 * core's snippet test leaves alone) compile together against this module.
 */
class ReadmeDashboardSnippetsTest {
    @Test
    void compile(@TempDir Path dir) throws Exception {
        ReadmeSnippets.assertCompile(ReadmeSnippets.fenced("java dashboard", 2), dir);
    }
}
