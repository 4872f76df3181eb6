package io.flexiq.test;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/** Runs the external commands a cluster needs, keeping what they print for error messages. */
final class Commands {
    private Commands() {}

    /** What a finished command came to. */
    record Result(String command, int status, String output) {
        boolean succeeded() {
            return status == 0;
        }

        /** Why it failed, for a message. */
        String failure() {
            return "`" + command + "` failed (exit status " + status + "); it printed:\n" + output;
        }
    }

    /** Runs {@code command} in {@code workDir} without input, stdout and stderr together. */
    static Result run(List<String> command, Path workDir) {
        String line = String.join(" ", command);
        try {
            Process process = new ProcessBuilder(command)
                    .directory(workDir.toFile())
                    .redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            return new Result(line, process.waitFor(), output.isEmpty() ? "(nothing)" : output);
        } catch (IOException e) {
            throw new PostgresServerException("could not run `" + line + "`: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PostgresServerException("interrupted while running `" + line + "`", e);
        }
    }

    /** Like {@link #run}, but a failure throws. */
    static Result checked(List<String> command, Path workDir) {
        Result result = run(command, workDir);
        if (!result.succeeded()) {
            throw new PostgresServerException(result.failure());
        }
        return result;
    }
}
