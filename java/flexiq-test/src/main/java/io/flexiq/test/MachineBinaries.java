package io.flexiq.test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/** Finds the machine's own PostgreSQL server binaries. */
final class MachineBinaries {
    /** Debian and Ubuntu keep each major version's binaries under here. */
    private static final Path DEBIAN_ROOT = Path.of("/usr/lib/postgresql");

    private MachineBinaries() {}

    /**
     * Whether {@code env} names the binaries to use ({@code FLEXIQ_PG_BIN}): to test against a
     * PostgreSQL version other than the embedded one, say. Such a choice wins over the embedded
     * binaries too.
     */
    static boolean chosen(Map<String, String> env) {
        String chosen = env.get("FLEXIQ_PG_BIN");
        return chosen != null && !chosen.isEmpty();
    }

    /**
     * The directory holding {@code initdb}, {@code pg_ctl} and {@code postgres}: the one named by
     * {@code FLEXIQ_PG_BIN} in {@code env}, else the newest {@code /usr/lib/postgresql/<N>/bin},
     * else {@code pg_config --bindir}.
     *
     * @throws PostgresServerException naming every place looked at, if none qualifies
     */
    static Path find(Map<String, String> env) {
        List<String> looked = new ArrayList<>();
        String chosen = env.get("FLEXIQ_PG_BIN");
        if (chosen != null && !chosen.isEmpty()) {
            // An explicit choice is final: quietly using other binaries would hide a mistake.
            Path dir = Path.of(chosen);
            if (hasServer(dir)) {
                return dir;
            }
            looked.add(dir + " (from FLEXIQ_PG_BIN)");
            throw notFound(looked);
        }
        List<Path> versions = debianVersions();
        if (versions.isEmpty()) {
            looked.add(DEBIAN_ROOT + "/<version>/bin (none present)");
        }
        for (Path bin : versions) {
            if (hasServer(bin)) {
                return bin;
            }
            looked.add(bin.toString());
        }
        Optional<Path> fromPgConfig = pgConfigBinDir(looked);
        if (fromPgConfig.isPresent()) {
            return fromPgConfig.get();
        }
        throw notFound(looked);
    }

    /** Version numbers of a directory name such as {@code 15} or {@code 9.6}, if it is one. */
    static Optional<int[]> version(String name) {
        if (!name.matches("\\d+(\\.\\d+)*")) {
            return Optional.empty();
        }
        return Optional.of(Arrays.stream(name.split("\\.")).mapToInt(Integer::parseInt).toArray());
    }

    /** {@code /usr/lib/postgresql/<N>/bin}, newest first (numerically: 10 before 9.6). */
    private static List<Path> debianVersions() {
        try (Stream<Path> entries = Files.list(DEBIAN_ROOT)) {
            return entries.filter(p -> version(p.getFileName().toString()).isPresent())
                    .sorted(Comparator.comparing((Path p) -> version(p.getFileName().toString()).orElseThrow(),
                            Arrays::compare).reversed())
                    .map(p -> p.resolve("bin"))
                    .toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    private static Optional<Path> pgConfigBinDir(List<String> looked) {
        Commands.Result result;
        try {
            result = Commands.run(List.of("pg_config", "--bindir"), Path.of("/"));
        } catch (PostgresServerException e) {
            looked.add("`pg_config --bindir` (" + e.getMessage() + ")");
            return Optional.empty();
        }
        if (!result.succeeded()) {
            looked.add("`pg_config --bindir` (exit status " + result.status() + ")");
            return Optional.empty();
        }
        Path dir = Path.of(result.output());
        if (hasServer(dir)) {
            return Optional.of(dir);
        }
        looked.add(dir + " (from `pg_config --bindir`)");
        return Optional.empty();
    }

    /** Client-only installs have {@code pg_ctl} but no server, hence all three. */
    private static boolean hasServer(Path dir) {
        return Stream.of("initdb", "pg_ctl", "postgres").allMatch(name -> Files.isRegularFile(dir.resolve(name)));
    }

    private static PostgresServerException notFound(List<String> looked) {
        return new PostgresServerException("no PostgreSQL server binaries (initdb, pg_ctl, postgres) found; looked in: "
                + String.join("; ", looked) + "; install PostgreSQL's server package or set FLEXIQ_PG_BIN to the "
                + "directory holding them");
    }
}
