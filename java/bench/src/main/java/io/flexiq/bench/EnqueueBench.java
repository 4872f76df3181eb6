package io.flexiq.bench;

import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.Task;
import io.flexiq.test.PostgresServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Enqueue throughput through the Java API beside the minimal SQL that stores the same jobs
 * ({@link MinimalSql}, driven by {@link Pgbench} with as many clients as the API has calling
 * threads) and, when built, beside the Rust core alone ({@link RustCore}), on one
 * private PostgreSQL, in one run. Within a round the sides run in turn, each after the tables
 * are emptied, so that a change in the machine's load meets all of them; each figure is the best
 * of the rounds, printed with the 1-minute load average read when it was measured. Compare
 * ratios within a run.
 *
 * <p>Arguments (optional): seconds per measurement (default 3), rounds (default 3, best kept).
 * {@code -Dflexiq.bench.workloads=W1_FRESH,W3_UNKEYED} (names of {@link Workload}, and
 * {@code W4_CODEC} for {@link PayloadCodecCost}) and
 * {@code -Dflexiq.bench.threads=4} narrow a run to those workloads and thread counts.
 */
public final class EnqueueBench {
    /** The benchmark's payload. */
    public record Order(long customerId, long amountCents) {}

    static final Task<Order> TASK = Task.of("charge_customer", Order.class);
    static final String SCHEMA = "flexiq_bench";
    static final AtomicLong SEQUENCE = new AtomicLong();
    /** The keys W2 replays: {@code hot-0} … {@code hot-99}, held before each of its measurements. */
    static final int HELD_KEYS = 100;
    /** Jobs per call in W4. */
    static final int BATCH = 1000;

    private EnqueueBench() {}

    /** The enqueue workloads of the comparison, with the calling threads each is measured at. */
    enum Workload {
        W1_FRESH("W1 keyed, fresh key", "fresh", 1, 1, 4, 16),
        W2_REPLAY("W2 keyed, held key replayed", "replay", 1, 1, 4, 16),
        W3_UNKEYED("W3 unkeyed", "unkeyed", 1, 1, 4, 16),
        W4_UNKEYED("W4 1,000 per call, unkeyed", "bulk-unkeyed", BATCH, 1, 2),
        W4_KEYED("W4 1,000 per call, keyed", "bulk-keyed", BATCH, 1, 2);

        final String label;
        /** The workload's name for the Rust example. */
        final String rustName;
        final int jobsPerCall;
        final int[] threads;

        Workload(String label, String rustName, int jobsPerCall, int... threads) {
            this.label = label;
            this.rustName = rustName;
            this.jobsPerCall = jobsPerCall;
            this.threads = threads;
        }
    }

    /** Runs the benchmark and prints its figures. */
    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        // FlexiQ as an application gets it: the builder's defaults (a pool of 10, fewer
        // connections than the 16 calling threads of the widest case), only the schema and
        // migration set.
        try (PostgresServer pg = PostgresServer.start();
                FlexiQ queue = FlexiQ.builder(pg.url()).schema(SCHEMA).migrate(true).build()) {
            String jdbcUrl = pg.jdbcUrl();
            MinimalSql.create(jdbcUrl);
            RustCore core = RustCore.find(pg.url());
            Pgbench pgbench = new Pgbench(pg);
            System.out.println("PostgreSQL: " + pg.url() + ", " + settings(jdbcUrl));
            System.out.printf(Locale.ROOT, "FlexiQ enqueue benchmark: %d cores, %s s per measurement after 0.5 s of"
                    + " warm-up, best of %d rounds; (load) = 1-minute load average when the figure was measured;"
                    + " load average at start: %s%n", Runtime.getRuntime().availableProcessors(), seconds, rounds,
                    loadAverages());
            if (core == null) {
                System.out.println("Rust core: not measured (no -Dflexiq.bench.rustCore=<enqueue_rate example>)");
            }
            System.out.printf(Locale.ROOT, "%nJobs (W2: replays) per second; the minimal SQL in auto-commit from pgbench,"
                    + " one client per thread, prepared statements:%n");
            System.out.printf(Locale.ROOT, "%-28s %7s %18s %18s %18s %11s %12s %8s%n", "workload", "threads",
                    "Java API (load)", "Rust core (load)", "pgbench (load)", "API/minimal", "core/minimal", "API/core");
            String only = System.getProperty("flexiq.bench.workloads");
            String onlyThreads = System.getProperty("flexiq.bench.threads");
            for (Workload w : Workload.values()) {
                if (!selected(only, w.name())) {
                    continue;
                }
                for (int threads : w.threads) {
                    if (!selected(onlyThreads, Integer.toString(threads))) {
                        continue;
                    }
                    Figure[] f = best(rounds, () -> emptyTables(queue, jdbcUrl, w),
                            () -> w.jobsPerCall * run(threads, seconds, () -> apiOp(queue, w)),
                            core == null ? null : () -> w.jobsPerCall * core.run(w, threads, seconds),
                            () -> w.jobsPerCall * pgbench.forSeconds(MinimalSql.script(w), threads, seconds));
                    System.out.printf(Locale.ROOT, "%-28s %7d %18s %18s %18s %11s %12s %8s%n", w.label, threads,
                            cell(f[0]), cell(f[1]), cell(f[2]), ratio(f[0], f[2]), ratio(f[1], f[2]), ratio(f[0], f[1]));
                }
            }
            if (selected(only, "W4_CODEC") && onlyThreads == null) {
                PayloadCodecCost.measure(pg, jdbcUrl, seconds, rounds);
            }
            // A run narrowed to some workloads or thread counts is a quick look at those: the
            // caller's connection is left out.
            if (only == null && onlyThreads == null) {
                CallerConnection.measure(queue, pg.url(), jdbcUrl, seconds, rounds);
            }
            System.out.println("\nLoad average at end: " + loadAverages());
        }
    }

    /** Whether {@code name} is in the comma-separated {@code list}; everything is when there is no list. */
    static boolean selected(String list, String name) {
        return list == null || Arrays.asList(list.split(",")).contains(name);
    }

    /** The PostgreSQL settings that decide what a commit costs. */
    static String settings(String jdbcUrl) throws SQLException {
        StringBuilder text = new StringBuilder();
        try (Connection c = DriverManager.getConnection(jdbcUrl); Statement s = c.createStatement()) {
            for (String name : new String[] {"fsync", "synchronous_commit", "shared_buffers"}) {
                try (ResultSet r = s.executeQuery("SHOW " + name)) {
                    r.next();
                    text.append(text.length() == 0 ? "" : ", ").append(name).append('=').append(r.getString(1));
                }
            }
        }
        return text.toString();
    }

    /** Empties FlexiQ's jobs and the minimal table; for W2, then holds the keys it replays on both. */
    static void emptyTables(FlexiQ queue, String jdbcUrl, Workload w) throws Exception {
        try (Connection c = DriverManager.getConnection(jdbcUrl); Statement s = c.createStatement()) {
            // CASCADE: the tables that reference jobs (checkpoints, redrives) are empty here anyway.
            s.execute("TRUNCATE " + SCHEMA + ".jobs, " + MinimalSql.TABLE + " CASCADE");
        }
        if (w == Workload.W2_REPLAY) {
            for (int k = 0; k < HELD_KEYS; k++) {
                queue.enqueue(TASK, new Order(42, k), EnqueueOptions.builder().uniqueKey("hot-" + k).build());
            }
            MinimalSql.seedHeldKeys(jdbcUrl);
        }
    }

    /** A rate, with the 1-minute load average read as its measurement ended. */
    record Figure(double perSecond, double load) {}

    interface Measurement {
        double perSecond() throws Exception;
    }

    interface Setup {
        void run() throws Exception;
    }

    /**
     * Measures each side (null: not measured) once per round, in turn, each after {@code setup};
     * returns each side's best figure (null for a side not measured).
     */
    static Figure[] best(int rounds, Setup setup, Measurement... sides) throws Exception {
        Figure[] best = new Figure[sides.length];
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < sides.length; i++) {
                if (sides[i] == null) {
                    continue;
                }
                setup.run();
                double rate = sides[i].perSecond();
                double load = loadAverage();
                if (best[i] == null || rate > best[i].perSecond()) {
                    best[i] = new Figure(rate, load);
                }
            }
        }
        return best;
    }

    static String cell(Figure f) {
        return f == null ? "-" : String.format(Locale.ROOT, "%.0f (%.2f)", f.perSecond(), f.load());
    }

    static String ratio(Figure a, Figure b) {
        return a == null || b == null ? "-" : String.format(Locale.ROOT, "%.2f", a.perSecond() / b.perSecond());
    }

    /** /proc/loadavg's three averages, or a note where there is none. */
    static String loadAverages() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return fields[0] + " " + fields[1] + " " + fields[2];
        } catch (IOException e) {
            return "unknown (no /proc/loadavg)";
        }
    }

    /** The 1-minute load average, or NaN where there is none. */
    static double loadAverage() {
        try {
            return Double.parseDouble(loadAverages().split(" ")[0]);
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    /** One unit of work, run repeatedly by one thread; each thread gets its own (for JDBC state). */
    interface Op {
        void run() throws Exception;

        /** Releases what the thread's op holds (its connection), once the measurement is over. */
        default void close() throws Exception {}
    }

    /** An op that closes {@code resource} when the measurement is over. */
    static Op closing(AutoCloseable resource, Op op) {
        return new Op() {
            @Override
            public void run() throws Exception {
                op.run();
            }

            @Override
            public void close() throws Exception {
                resource.close();
            }
        };
    }

    interface OpFactory {
        Op create() throws Exception;
    }

    /** Runs {@code threads} threads for {@code seconds} after a short warm-up; returns ops per second. */
    static double run(int threads, double seconds, OpFactory factory) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Long>> counts = new ArrayList<>();
            long warmEnd = System.nanoTime() + 500_000_000L;
            long end = warmEnd + (long) (seconds * 1e9);
            for (int t = 0; t < threads; t++) {
                counts.add(pool.submit(() -> {
                    Op op = factory.create();
                    try {
                        while (System.nanoTime() < warmEnd) {
                            op.run();
                        }
                        long n = 0;
                        while (System.nanoTime() < end) {
                            op.run();
                            n++;
                        }
                        return n;
                    } finally {
                        op.close();
                    }
                }));
            }
            long total = 0;
            for (Future<Long> c : counts) {
                total += c.get();
            }
            return total / seconds;
        } finally {
            pool.shutdown();
        }
    }

    /** One thread's calls of the Java API for {@code w}. */
    static Op apiOp(FlexiQ queue, Workload w) {
        EnqueueOptions derived = EnqueueOptions.builder().idempotent(true).build();
        return () -> {
            switch (w) {
                case W1_FRESH -> {
                    long n = SEQUENCE.incrementAndGet();
                    queue.enqueue(TASK, new Order(42, n), EnqueueOptions.builder().uniqueKey("fresh-" + n).build());
                }
                case W2_REPLAY -> {
                    long k = SEQUENCE.incrementAndGet() % HELD_KEYS;
                    queue.enqueue(TASK, new Order(42, k), EnqueueOptions.builder().uniqueKey("hot-" + k).build());
                }
                case W3_UNKEYED -> queue.enqueue(TASK, new Order(42, SEQUENCE.incrementAndGet()));
                case W4_UNKEYED, W4_KEYED -> {
                    long base = SEQUENCE.getAndAdd(BATCH);
                    List<Order> orders = new ArrayList<>(BATCH);
                    for (int i = 0; i < BATCH; i++) {
                        orders.add(new Order(42, base + i));
                    }
                    queue.enqueueMany(TASK, orders, w == Workload.W4_KEYED ? derived : EnqueueOptions.defaults());
                }
            }
        };
    }

    /** The payload as FlexiQ stores an {@link Order}: canonical JSON. */
    static byte[] payload(long customer, long amount) {
        return ("{\"amountCents\":" + amount + ",\"customerId\":" + customer + "}").getBytes(StandardCharsets.UTF_8);
    }

    static byte[] sha256(byte[] bytes) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(bytes);
    }
}
