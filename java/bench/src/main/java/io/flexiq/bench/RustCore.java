package io.flexiq.bench;

import io.flexiq.bench.EnqueueBench.Workload;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The core's enqueue without JNI or Java: the {@code enqueue_rate} example of flexiq-core
 * (built by {@code gradle bench}, named by {@code -Dflexiq.bench.rustCore}), one process per
 * measurement, against the same schema with the same default pool and a runtime like the JNI
 * library's. Its tasks stand in for the Java API's calling threads.
 */
final class RustCore {
    private final Path binary;
    private final String url;

    private RustCore(Path binary, String url) {
        this.binary = binary;
        this.url = url;
    }

    /** The example named by the system property, or null when there is none to run. */
    static RustCore find(String url) {
        String path = System.getProperty("flexiq.bench.rustCore");
        if (path == null || !Files.isExecutable(Path.of(path))) {
            return null;
        }
        return new RustCore(Path.of(path), url);
    }

    /** Runs {@code workload} on {@code tasks} tasks for {@code seconds} (after its warm-up); returns calls per second. */
    double run(Workload workload, int tasks, double seconds) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(binary.toString(), url, EnqueueBench.SCHEMA, workload.rustName,
                Integer.toString(tasks), String.format(Locale.ROOT, "%s", seconds))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        String out;
        try (InputStream in = p.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        }
        int status = p.waitFor();
        if (status != 0) {
            throw new IllegalStateException(binary + " " + workload.rustName + " failed with exit status " + status
                    + " (its message is above)");
        }
        return Double.parseDouble(out);
    }
}
