package io.flexiq.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Where a period of a long run went on the server: checkpoints (timed and requested), WAL
 * written and its full-page images, and CPU seconds of this JVM, of PostgreSQL's autovacuum and
 * of the rest of PostgreSQL. Counters are cumulative; {@link #since} gives a period's deltas.
 * CPU comes from Linux's {@code /proc} (NaN elsewhere): PostgreSQL's processes are the
 * postmaster's children, and the CPU of those that exited (autovacuum workers, which start and
 * end per table) is the postmaster's reaped children's time.
 */
record ServerActivity(long timedCheckpoints, long requestedCheckpoints, long walBytes, long fullPageImages,
        double jvmSeconds, double autovacuumSeconds, double postgresSeconds) {
    static final String HEADER = String.format(Locale.ROOT, "%9s %9s %9s %8s %8s %8s",
            "ckpt t/r", "WAL MB", "FPI k", "jvm s", "autovac s", "pg s");
    private static final double TICKS_PER_SECOND = 100.0; // USER_HZ on Linux

    /** The counters now. */
    static ServerActivity read(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT b.checkpoints_timed, b.checkpoints_req, w.wal_bytes::bigint,"
                        + " w.wal_fpi, pg_backend_pid()"
                        + " FROM pg_stat_bgwriter b, pg_stat_wal w")) {
            r.next();
            double[] pg = postgresCpu(r.getLong(5));
            return new ServerActivity(r.getLong(1), r.getLong(2), r.getLong(3), r.getLong(4), jvmCpu(), pg[0], pg[1]);
        }
    }

    /** This period: the counters' growth since {@code start}. */
    ServerActivity since(ServerActivity start) {
        return new ServerActivity(timedCheckpoints - start.timedCheckpoints,
                requestedCheckpoints - start.requestedCheckpoints, walBytes - start.walBytes,
                fullPageImages - start.fullPageImages, jvmSeconds - start.jvmSeconds,
                autovacuumSeconds - start.autovacuumSeconds, postgresSeconds - start.postgresSeconds);
    }

    /** The period's columns under {@link #HEADER}. */
    String row() {
        return String.format(Locale.ROOT, "%9s %9.0f %9.0f %8.0f %8.0f %8.0f", timedCheckpoints + "/"
                + requestedCheckpoints, walBytes / 1048576.0, fullPageImages / 1000.0, jvmSeconds,
                autovacuumSeconds, postgresSeconds);
    }

    private static double jvmCpu() {
        var os = ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean sun
                ? sun.getProcessCpuTime() / 1e9 : Double.NaN;
    }

    /** Autovacuum's CPU seconds and the rest of PostgreSQL's, found from one backend's pid. */
    private static double[] postgresCpu(long backend) {
        try {
            long postmaster = Long.parseLong(stat(backend)[3]);
            String[] own = stat(postmaster);
            double reaped = (Long.parseLong(own[15]) + Long.parseLong(own[16])) / TICKS_PER_SECOND;
            double autovacuum = reaped;
            double rest = (Long.parseLong(own[13]) + Long.parseLong(own[14])) / TICKS_PER_SECOND;
            try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
                for (Path p : (Iterable<Path>) processes::iterator) {
                    String name = p.getFileName().toString();
                    if (!name.chars().allMatch(Character::isDigit)) {
                        continue;
                    }
                    String[] f;
                    try {
                        f = stat(Long.parseLong(name));
                    } catch (IOException gone) {
                        continue;
                    }
                    if (Long.parseLong(f[3]) != postmaster) {
                        continue;
                    }
                    double seconds = (Long.parseLong(f[13]) + Long.parseLong(f[14])) / TICKS_PER_SECOND;
                    if (f[1].contains("autovacuum") || commandLine(p).contains("autovacuum worker")) {
                        autovacuum += seconds;
                    } else {
                        rest += seconds;
                    }
                }
            }
            return new double[] {autovacuum, rest};
        } catch (IOException | RuntimeException unreadable) {
            return new double[] {Double.NaN, Double.NaN};
        }
    }

    /** The fields of {@code /proc/<pid>/stat}, the command name (which may hold spaces) as one. */
    private static String[] stat(long pid) throws IOException {
        String line = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        int open = line.indexOf('(');
        int close = line.lastIndexOf(')');
        String[] after = line.substring(close + 2).split(" ");
        String[] fields = new String[after.length + 2];
        fields[0] = line.substring(0, open - 1);
        fields[1] = line.substring(open + 1, close);
        System.arraycopy(after, 0, fields, 2, after.length);
        return fields;
    }

    private static String commandLine(Path process) {
        try {
            return new String(Files.readAllBytes(process.resolve("cmdline")));
        } catch (IOException gone) {
            return "";
        }
    }
}
