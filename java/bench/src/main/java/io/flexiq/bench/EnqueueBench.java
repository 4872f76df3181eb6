package io.flexiq.bench;

import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.Task;
import io.flexiq.test.PostgresServer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Enqueue throughput through the Java API beside the same SQL statements driven over JDBC
 * (no JNI, no Rust), on one private PostgreSQL with durable commits (fsync and synchronous
 * commit on), in one run. Figures are operations (or jobs) per second; compare ratios.
 *
 * <p>Arguments (optional): seconds per measurement (default 3), rounds (default 3, best kept).
 */
public final class EnqueueBench {
    /** The benchmark's payload. */
    public record Order(long customerId, long amountCents) {}

    static final Task<Order> TASK = Task.of("charge_customer", Order.class);
    static final String SCHEMA = "flexiq_bench";
    static final AtomicLong SEQUENCE = new AtomicLong();

    private EnqueueBench() {}

    enum Mode { FRESH_KEYED, REPLAYED_KEYED, UNKEYED }

    /** Runs the benchmark and prints its figures. */
    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        try (PostgresServer pg = PostgresServer.start();
                FlexiQ queue = FlexiQ.builder(pg.url()).schema(SCHEMA).poolSize(8).migrate(true).build()) {
            for (int k = 0; k < 100; k++) {
                queue.enqueue(TASK, new Order(42, k), EnqueueOptions.builder().uniqueKey("hot-" + k).build());
            }
            System.out.println("PostgreSQL: " + pg.url());
            System.out.printf(Locale.ROOT, "FlexiQ enqueue benchmark: %d cores, PostgreSQL with fsync and synchronous_commit on,"
                    + " %.0f s per measurement, best of %d%n%n", Runtime.getRuntime().availableProcessors(), seconds, rounds);
            System.out.printf(Locale.ROOT, "%-16s %7s %14s %14s %7s%n", "single enqueue", "threads", "Java API/s", "raw SQL/s", "ratio");
            for (Mode mode : Mode.values()) {
                for (int threads : new int[] {1, 4}) {
                    double api = 0;
                    double raw = 0;
                    for (int r = 0; r < rounds; r++) {
                        api = Math.max(api, run(threads, seconds, () -> apiSingle(queue, mode)));
                        raw = Math.max(raw, run(threads, seconds, rawSingle(pg.jdbcUrl(), mode)));
                    }
                    System.out.printf(Locale.ROOT, "%-16s %7d %14.0f %14.0f %7.2f%n",
                            mode.name().toLowerCase(Locale.ROOT), threads, api, raw, api / raw);
                }
            }
            System.out.printf(Locale.ROOT, "%n%-16s %7s %15s %15s %7s%n", "enqueueMany 1000", "threads",
                    "Java API jobs/s", "raw SQL jobs/s", "ratio");
            for (boolean keyed : new boolean[] {false, true}) {
                for (int threads : new int[] {1, 2}) {
                    double api = 0;
                    double raw = 0;
                    for (int r = 0; r < rounds; r++) {
                        api = Math.max(api, 1000 * run(threads, seconds, () -> apiBatch(queue, keyed)));
                        raw = Math.max(raw, 1000 * run(threads, seconds, rawBatch(pg.jdbcUrl(), keyed)));
                    }
                    System.out.printf(Locale.ROOT, "%-16s %7d %15.0f %15.0f %7.2f%n",
                            keyed ? "keyed" : "unkeyed", threads, api, raw, api / raw);
                }
            }
            callerConnection(queue, pg.jdbcUrl(), seconds, rounds);
        }
    }

    /**
     * Keyed enqueues on the caller's connection, committed by the caller, beside the same SQL
     * over JDBC and beside a bare insert (see {@link CallerConnection}). The tables are emptied
     * before each measurement, which then starts from the same empty indexes.
     */
    static void callerConnection(FlexiQ queue, String jdbcUrl, double seconds, int rounds) throws Exception {
        CallerConnection.createRawTable(jdbcUrl);
        CallerConnection.checkSameSql(queue, jdbcUrl);
        System.out.printf(Locale.ROOT, "%n%-22s %7s %15s %15s %18s %9s %9s%n", "on caller's connection", "threads",
                "Java API jobs/s", "same SQL jobs/s", "bare insert jobs/s", "API/same", "API/bare");
        for (boolean many : new boolean[] {false, true}) {
            int jobs = many ? 1000 : 1;
            for (int threads : new int[] {1, 4}) {
                double api = 0;
                double same = 0;
                double bare = 0;
                for (int r = 0; r < rounds; r++) {
                    CallerConnection.emptyTables(jdbcUrl);
                    api = Math.max(api, jobs * run(threads, seconds,
                            many ? CallerConnection.apiMany(queue, jdbcUrl) : CallerConnection.apiSingle(queue, jdbcUrl)));
                    CallerConnection.emptyTables(jdbcUrl);
                    same = Math.max(same, jobs * run(threads, seconds,
                            many ? CallerConnection.sameSqlMany(jdbcUrl) : CallerConnection.sameSqlSingle(jdbcUrl)));
                    CallerConnection.emptyTables(jdbcUrl);
                    bare = Math.max(bare, jobs * run(threads, seconds,
                            many ? CallerConnection.bareMany(jdbcUrl) : CallerConnection.bareSingle(jdbcUrl)));
                }
                System.out.printf(Locale.ROOT, "%-22s %7d %15.0f %15.0f %18.0f %9.2f %9.2f%n",
                        many ? "keyed, 1000 per commit" : "keyed, 1 per commit", threads, api, same, bare, api / same, api / bare);
            }
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

    static Op apiSingle(FlexiQ queue, Mode mode) {
        return () -> {
            long n = SEQUENCE.incrementAndGet();
            switch (mode) {
                case FRESH_KEYED -> queue.enqueue(TASK, new Order(42, n), EnqueueOptions.builder().uniqueKey("fresh-" + n).build());
                case REPLAYED_KEYED -> queue.enqueue(TASK, new Order(42, n % 100),
                        EnqueueOptions.builder().uniqueKey("hot-" + (n % 100)).build());
                case UNKEYED -> queue.enqueue(TASK, new Order(42, n));
            }
        };
    }

    static Op apiBatch(FlexiQ queue, boolean keyed) {
        return () -> {
            List<Order> orders = new ArrayList<>(1000);
            long base = SEQUENCE.getAndAdd(1000);
            for (int i = 0; i < 1000; i++) {
                orders.add(new Order(42, base + i));
            }
            EnqueueOptions options = keyed ? EnqueueOptions.builder().idempotent(true).build() : EnqueueOptions.defaults();
            queue.enqueueMany(TASK, orders, options);
        };
    }

    /** The statements the native core runs, prepared on a plain JDBC connection, with the arrays the core would send. */
    static final class RawSql implements AutoCloseable {
        final Connection connection;
        final CoreStatement keyed;
        final CoreStatement unkeyed;

        RawSql(String jdbcUrl) throws Exception {
            this(DriverManager.getConnection(jdbcUrl));
        }

        /** The statements on {@code connection}, which this closes. */
        RawSql(Connection connection) throws Exception {
            this.connection = connection;
            keyed = new CoreStatement(connection, "enqueue_keyed.sql", SCHEMA);
            unkeyed = new CoreStatement(connection, "insert_unkeyed.sql", SCHEMA);
        }

        /**
         * Sends entries (keys null for none, else distinct keys) as one statement. Returns how
         * many jobs it created; a conflict (a key held for a different request) means these are
         * not the jobs FlexiQ would send, and fails.
         */
        int send(List<byte[]> payloads, List<String> keys) throws Exception {
            int n = payloads.size();
            Integer[] order = new Integer[n];
            byte[][] digests = new byte[n][];
            for (int i = 0; i < n; i++) {
                order[i] = i;
                digests[i] = keys == null ? null : sha256(keys.get(i).getBytes(StandardCharsets.UTF_8));
            }
            if (keys != null) {
                // Keys go in digest order, as the core sends them.
                Arrays.sort(order, (a, b) -> Arrays.compareUnsigned(digests[a], digests[b]));
            }
            CoreStatement st = keys == null ? unkeyed : keyed;
            st.setArray(1, connection.createArrayOf("bytea", Arrays.stream(order).map(payloads::get).toArray(byte[][]::new)));
            st.setArray(2, connection.createArrayOf("text", filled(n, "default")));
            st.setArray(3, connection.createArrayOf("text", filled(n, TASK.name())));
            st.setArray(4, connection.createArrayOf("int4", filled(n, 0)));
            st.setArray(5, connection.createArrayOf("int8", new Long[n]));
            st.setArray(6, connection.createArrayOf("int8", new Long[n]));
            st.setArray(7, connection.createArrayOf("int4", filled(n, 20)));
            st.setArray(8, connection.createArrayOf("int8", filled(n, 1_000L)));
            st.setArray(9, connection.createArrayOf("int8", filled(n, 3_600_000L)));
            st.setArray(10, connection.createArrayOf("float8", filled(n, 2.0)));
            st.setArray(11, connection.createArrayOf("float8", filled(n, 0.1)));
            st.setArray(12, connection.createArrayOf("int8", new Long[n]));
            st.setArray(13, connection.createArrayOf("text", filled(n, "[]")));
            st.setArray(14, connection.createArrayOf("int8", new Long[n]));
            if (keys != null) {
                st.setArray(15, connection.createArrayOf("text", filled(n, "default")));
                st.setArray(16, connection.createArrayOf("bytea", Arrays.stream(order).map(i -> digests[i]).toArray(byte[][]::new)));
                st.setArray(17, connection.createArrayOf("text", Arrays.stream(order).map(i -> preview(keys.get(i))).toArray()));
                st.setArray(18, connection.createArrayOf("int4", Arrays.stream(order).map(i -> i + 1).toArray()));
            }
            int created = 0;
            try (ResultSet r = st.prepared.executeQuery()) {
                while (r.next()) {
                    r.getLong(1);
                    created += r.getBoolean(2) ? 1 : 0;
                    String conflict = r.getString(3);
                    if (conflict != null) {
                        throw new IllegalStateException("the raw side asked for a different job than FlexiQ stored: " + conflict);
                    }
                }
            }
            return created;
        }

        private static Object[] filled(int n, Object value) {
            Object[] values = new Object[n];
            Arrays.fill(values, value);
            return values;
        }

        private static String preview(String key) {
            return key.substring(0, Math.min(8, key.length() / 3)) + "\u2026";
        }

        @Override
        public void close() throws SQLException {
            connection.close();
        }
    }

    static byte[] payload(long customer, long amount) {
        return ("{\"amountCents\":" + amount + ",\"customerId\":" + customer + "}").getBytes(StandardCharsets.UTF_8);
    }

    static OpFactory rawSingle(String jdbcUrl, Mode mode) {
        return () -> {
            RawSql sql = new RawSql(jdbcUrl);
            return closing(sql, () -> {
                long n = SEQUENCE.incrementAndGet();
                switch (mode) {
                    case FRESH_KEYED -> sql.send(List.of(payload(42, n)), List.of("fresh-" + n));
                    case REPLAYED_KEYED -> sql.send(List.of(payload(42, n % 100)), List.of("hot-" + (n % 100)));
                    case UNKEYED -> sql.send(List.of(payload(42, n)), null);
                }
            });
        };
    }

    static OpFactory rawBatch(String jdbcUrl, boolean keyed) {
        return () -> {
            RawSql sql = new RawSql(jdbcUrl);
            return closing(sql, () -> {
                long base = SEQUENCE.getAndAdd(1000);
                List<byte[]> payloads = new ArrayList<>(1000);
                List<String> keys = new ArrayList<>(1000);
                for (int i = 0; i < 1000; i++) {
                    payloads.add(payload(42, base + i));
                    keys.add("batch-" + (base + i));
                }
                sql.send(payloads, keyed ? keys : null);
            });
        };
    }

    static byte[] sha256(byte[] bytes) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(bytes);
    }
}
