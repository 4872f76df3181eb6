package io.flexiq.bench;

import io.flexiq.test.PostgresServer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * PostgreSQL's own limit for a job: the minimal SQL driven by {@code pgbench} (prepared
 * statements, one connection per client, no client work but pgbench's), the baseline the
 * benchmarks divide by. A loop through JDBC is no limit: on this machine it reached a fifth of
 * what pgbench reaches with the same statements.
 *
 * <p>The binary: {@code FLEXIQ_PGBENCH}, else the newest {@code /usr/lib/postgresql/<N>/bin},
 * else {@code pgbench} on the {@code PATH}.
 */
final class Pgbench {
    private static final Pattern TPS = Pattern.compile("tps = ([0-9.]+) \\(without initial connection time\\)");

    private final String binary;
    private final PostgresServer pg;

    Pgbench(PostgresServer pg) {
        this.binary = binary();
        this.pg = pg;
    }

    private static String binary() {
        String named = System.getenv("FLEXIQ_PGBENCH");
        if (named != null && !named.isEmpty()) {
            return named;
        }
        try (Stream<Path> versions = Files.list(Path.of("/usr/lib/postgresql"))) {
            return versions.filter(v -> v.getFileName().toString().matches("[0-9]+")
                            && Files.isExecutable(v.resolve("bin/pgbench")))
                    .max(Comparator.comparingInt(v -> Integer.parseInt(v.getFileName().toString())))
                    .map(v -> v.resolve("bin/pgbench").toString())
                    .orElse("pgbench");
        } catch (IOException e) {
            return "pgbench";
        }
    }

    /**
     * Transactions per second of {@code script} run by {@code clients} clients for {@code seconds}
     * (rounded up to whole seconds, pgbench's unit).
     */
    double forSeconds(String script, int clients, double seconds) throws Exception {
        return run(script, clients, "-T", Integer.toString((int) Math.ceil(seconds)));
    }

    /** Transactions per second of {@code script} run {@code transactions} times by each of {@code clients}. */
    double forTransactions(String script, int clients, int transactions) throws Exception {
        return run(script, clients, "-t", Integer.toString(transactions));
    }

    private double run(String script, int clients, String limit, String amount) throws Exception {
        Path file = Files.createTempFile("flexiq-bench-", ".sql");
        try {
            Files.writeString(file, script);
            List<String> command = new ArrayList<>(List.of(binary, "-n", "-M", "prepared",
                    "-c", Integer.toString(clients), "-j", Integer.toString(clients), limit, amount,
                    "-f", file.toString(), "-h", "127.0.0.1", "-p", Integer.toString(pg.port()), "-U", "postgres",
                    "postgres"));
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out;
            try (InputStream in = p.getInputStream()) {
                out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            int status = p.waitFor();
            Matcher tps = TPS.matcher(out);
            if (status != 0 || !tps.find()) {
                throw new IllegalStateException(String.format(Locale.ROOT,
                        "pgbench (%s) failed with status %d: %s; set FLEXIQ_PGBENCH to another pgbench if this one"
                                + " does not run", binary, status, out.strip()));
            }
            return Double.parseDouble(tps.group(1));
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
