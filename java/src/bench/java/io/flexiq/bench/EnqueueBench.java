package io.flexiq.bench;

import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.Task;
import io.flexiq.testing.LocalPostgres;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
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
    private static final String SCHEMA = "flexiq_bench";
    private static final String REQUEST_TEMPLATE = "{\"maxAttempts\":20,\"payloadSha256\":\"%s\",\"priority\":0,"
            + "\"queue\":\"default\",\"retryPolicy\":{\"initialMs\":1000,\"jitter\":0.1,\"maxMs\":3600000,"
            + "\"multiplier\":2.0},\"tags\":[],\"task\":\"charge_customer\"}";
    private static final AtomicLong SEQUENCE = new AtomicLong();

    private EnqueueBench() {}

    enum Mode { FRESH_KEYED, REPLAYED_KEYED, UNKEYED }

    /** Runs the benchmark and prints its figures. */
    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        try (LocalPostgres pg = LocalPostgres.start();
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
            System.out.printf(Locale.ROOT, "%n%-16s %7s %14s %14s %7s%n", "enqueueMany", "batch", "Java API jobs/s",
                    "raw SQL jobs/s", "ratio");
            for (boolean keyed : new boolean[] {false, true}) {
                double api = 0;
                double raw = 0;
                for (int r = 0; r < rounds; r++) {
                    api = Math.max(api, 1000 * run(1, seconds, () -> apiBatch(queue, keyed)));
                    raw = Math.max(raw, 1000 * run(1, seconds, rawBatch(pg.jdbcUrl(), keyed)));
                }
                System.out.printf(Locale.ROOT, "%-16s %7d %14.0f %14.0f %7.2f%n",
                        keyed ? "keyed" : "unkeyed", 1000, api, raw, api / raw);
            }
        }
    }

    /** One unit of work, run repeatedly by one thread; each thread gets its own (for JDBC state). */
    interface Op {
        void run() throws Exception;
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
                    while (System.nanoTime() < warmEnd) {
                        op.run();
                    }
                    long n = 0;
                    while (System.nanoTime() < end) {
                        op.run();
                        n++;
                    }
                    return n;
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

    static String nextKey() {
        return "fresh-" + SEQUENCE.incrementAndGet();
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

    /** The statements the native core runs, prepared on a plain JDBC connection. */
    static final class RawSql implements AutoCloseable {
        final Connection connection;
        final PreparedStatement keyed;
        final PreparedStatement unkeyed;

        RawSql(String jdbcUrl) throws SQLException {
            connection = DriverManager.getConnection(jdbcUrl);
            keyed = connection.prepareStatement("SELECT job_id, replayed FROM " + SCHEMA
                    + ".enqueue_keyed(?, ?::jsonb[], ?, ?, ?)");
            unkeyed = connection.prepareStatement("INSERT INTO " + SCHEMA + ".jobs SELECT r.* FROM unnest(?::bytea[], "
                    + "?::jsonb[]) WITH ORDINALITY AS t(payload, request, ord), " + SCHEMA + ".job_row(nextval('"
                    + SCHEMA + ".jobs_id_seq'), t.payload, t.request, NULL, NULL, NULL) r ORDER BY t.ord RETURNING id");
        }

        /** Sends entries (key null for none) as one statement, computing what the core computes. */
        void send(List<byte[]> payloads, List<String> keys) throws Exception {
            int n = payloads.size();
            String[] requests = new String[n];
            for (int i = 0; i < n; i++) {
                requests[i] = String.format(REQUEST_TEMPLATE, hex(sha256(payloads.get(i))));
            }
            Array payloadArray = connection.createArrayOf("bytea", payloads.toArray(new byte[0][]));
            Array requestArray = connection.createArrayOf("text", requests);
            PreparedStatement st;
            if (keys == null) {
                st = unkeyed;
                st.setArray(1, payloadArray);
                st.setArray(2, requestArray);
            } else {
                String[] scopes = new String[n];
                byte[][] digests = new byte[n][];
                String[] previews = new String[n];
                for (int i = 0; i < n; i++) {
                    scopes[i] = "default";
                    digests[i] = sha256(keys.get(i).getBytes(StandardCharsets.UTF_8));
                    previews[i] = keys.get(i).substring(0, Math.min(8, keys.get(i).length() / 3)) + "…";
                }
                st = keyed;
                st.setArray(1, payloadArray);
                st.setArray(2, requestArray);
                st.setArray(3, connection.createArrayOf("text", scopes));
                st.setArray(4, connection.createArrayOf("bytea", digests));
                st.setArray(5, connection.createArrayOf("text", previews));
            }
            try (ResultSet r = st.executeQuery()) {
                while (r.next()) {
                    r.getLong(1);
                }
            }
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
            return () -> {
                long n = SEQUENCE.incrementAndGet();
                switch (mode) {
                    case FRESH_KEYED -> sql.send(List.of(payload(42, n)), List.of("fresh-" + n));
                    case REPLAYED_KEYED -> sql.send(List.of(payload(42, n % 100)), List.of("hot-" + (n % 100)));
                    case UNKEYED -> sql.send(List.of(payload(42, n)), null);
                }
            };
        };
    }

    static OpFactory rawBatch(String jdbcUrl, boolean keyed) {
        return () -> {
            RawSql sql = new RawSql(jdbcUrl);
            return () -> {
                long base = SEQUENCE.getAndAdd(1000);
                List<byte[]> payloads = new ArrayList<>(1000);
                List<String> keys = new ArrayList<>(1000);
                for (int i = 0; i < 1000; i++) {
                    payloads.add(payload(42, base + i));
                    keys.add("batch-" + (base + i));
                }
                sql.send(payloads, keyed ? keys : null);
            };
        };
    }

    static byte[] sha256(byte[] bytes) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(bytes);
    }

    static String hex(byte[] bytes) {
        StringBuilder s = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            s.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        return s.toString();
    }
}
