package io.flexiq.bench;

import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.bench.EnqueueBench.OpFactory;
import io.flexiq.bench.EnqueueBench.Order;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/**
 * Enqueue on the application's own JDBC connection, committed by the application, beside two
 * baselines on the same kind of connection with the same commits: the same SQL over JDBC
 * (FlexiQ's statement for keyed entries with the arrays it would bind, built by hand), which
 * leaves FlexiQ's own work in Java, JNI and binding as the difference; and the minimal SQL an
 * application would write for the same rows, a bare {@code INSERT … ON CONFLICT DO NOTHING}
 * into a copy of the jobs table (same columns, constraints and indexes, among them the unique
 * index on the key; no triggers), which leaves out the statement's own cost in PostgreSQL as
 * well. Each thread has its own connection; every measured job has a fresh key.
 */
final class CallerConnection {
    private static final String SCHEMA = EnqueueBench.SCHEMA;
    private static final String RAW_TABLE = SCHEMA + ".raw_jobs";
    /** The job's columns, as FlexiQ fills them for a job due now with a key and default options. */
    private static final String COLUMNS = "(queue, task, payload, state, priority, run_at, max_attempts,"
            + " retry_initial_ms, retry_max_ms, retry_multiplier, retry_jitter, tags, key_scope, key_digest,"
            + " key_preview, key_held, created_at)";
    private static final String ON_CONFLICT = " ON CONFLICT (key_scope, key_digest) WHERE key_held DO NOTHING RETURNING id";
    private static final String RAW_ONE = "INSERT INTO " + RAW_TABLE + " " + COLUMNS
            + " VALUES ('default', 'charge_customer', ?, 'available', 0, now(), 20, 1000, 3600000, 2.0, 0.1,"
            + " '[]', 'default', ?, ?, true, now())" + ON_CONFLICT;
    private static final String RAW_MANY = "INSERT INTO " + RAW_TABLE + " " + COLUMNS
            + " SELECT 'default', 'charge_customer', e.payload, 'available', 0, now(), 20, 1000, 3600000, 2.0, 0.1,"
            + " '[]', 'default', e.digest, e.preview, true, now()"
            + " FROM unnest(?::bytea[], ?::bytea[], ?::text[]) AS e(payload, digest, preview)" + ON_CONFLICT;

    private CallerConnection() {}

    /**
     * Prints the table: keyed enqueues on the caller's connection, committed by the caller. The
     * tables are emptied before each measurement, which then starts from the same empty indexes.
     */
    static void measure(FlexiQ queue, String url, String jdbcUrl, double seconds, int rounds) throws Exception {
        createRawTable(jdbcUrl);
        SameSql.Template template = SameSql.Template.of(url);
        checkSameSql(queue, jdbcUrl, template);
        System.out.printf(Locale.ROOT, "%nOn the caller's connection, keyed, jobs per second:%n");
        System.out.printf(Locale.ROOT, "%-22s %7s %18s %18s %18s %9s %9s%n", "caller commits", "threads",
                "Java API (load)", "same SQL (load)", "bare insert (load)", "API/same", "API/bare");
        for (boolean many : new boolean[] {false, true}) {
            int jobs = many ? 1000 : 1;
            for (int threads : new int[] {1, 4}) {
                EnqueueBench.Figure[] f = EnqueueBench.best(rounds, () -> emptyTables(jdbcUrl),
                        () -> jobs * EnqueueBench.run(threads, seconds, many ? apiMany(queue, jdbcUrl) : apiSingle(queue, jdbcUrl)),
                        () -> jobs * EnqueueBench.run(threads, seconds, many ? sameSqlMany(jdbcUrl, template) : sameSqlSingle(jdbcUrl, template)),
                        () -> jobs * EnqueueBench.run(threads, seconds, many ? bareMany(jdbcUrl) : bareSingle(jdbcUrl)));
                System.out.printf(Locale.ROOT, "%-22s %7d %18s %18s %18s %9s %9s%n",
                        many ? "1000 per commit" : "1 per commit", threads, EnqueueBench.cell(f[0]), EnqueueBench.cell(f[1]),
                        EnqueueBench.cell(f[2]), EnqueueBench.ratio(f[0], f[1]), EnqueueBench.ratio(f[0], f[2]));
            }
        }
    }

    /** Creates the bare insert's table: a copy of the jobs table without its triggers. */
    private static void createRawTable(String jdbcUrl) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + RAW_TABLE + " (LIKE " + SCHEMA + ".jobs INCLUDING ALL)");
        }
    }

    /** Empties both tables (the same SQL fills FlexiQ's), so that each measurement starts from the same (empty) indexes. */
    private static void emptyTables(String jdbcUrl) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl); Statement s = c.createStatement()) {
            // CASCADE: the tables that reference jobs (checkpoints, redrives) are empty here anyway.
            s.execute("TRUNCATE " + SCHEMA + ".jobs, " + RAW_TABLE + " CASCADE");
        }
    }

    private static Connection transaction(String jdbcUrl) throws SQLException {
        Connection c = DriverManager.getConnection(jdbcUrl);
        c.setAutoCommit(false);
        return c;
    }

    /** FlexiQ: one keyed job per transaction on the caller's connection. */
    static OpFactory apiSingle(FlexiQ queue, String jdbcUrl) {
        return () -> {
            Connection c = transaction(jdbcUrl);
            return EnqueueBench.closing(c, () -> {
                long n = EnqueueBench.SEQUENCE.incrementAndGet();
                queue.enqueue(c, EnqueueBench.TASK, new Order(42, n), EnqueueOptions.builder().uniqueKey("conn-" + n).build());
                c.commit();
            });
        };
    }

    /** FlexiQ: 1,000 keyed jobs (keys derived from the payloads) in one transaction on the caller's connection. */
    static OpFactory apiMany(FlexiQ queue, String jdbcUrl) {
        EnqueueOptions derived = EnqueueOptions.builder().idempotent(true).build();
        return () -> {
            Connection c = transaction(jdbcUrl);
            return EnqueueBench.closing(c, () -> {
                long base = EnqueueBench.SEQUENCE.getAndAdd(1000);
                List<Order> orders = new ArrayList<>(1000);
                for (int i = 0; i < 1000; i++) {
                    orders.add(new Order(42, base + i));
                }
                queue.enqueueMany(c, EnqueueBench.TASK, orders, derived);
                c.commit();
            });
        };
    }

    /** The same SQL: one keyed job per transaction, FlexiQ's statement with the key FlexiQ is given. */
    static OpFactory sameSqlSingle(String jdbcUrl, SameSql.Template template) {
        return () -> {
            SameSql sql = new SameSql(transaction(jdbcUrl), template);
            return EnqueueBench.closing(sql, () -> {
                long n = EnqueueBench.SEQUENCE.incrementAndGet();
                sql.send(List.of(EnqueueBench.payload(42, n)), List.of("conn-" + n));
                sql.connection.commit();
            });
        };
    }

    /** The same SQL: 1,000 keyed jobs in one transaction, with the keys FlexiQ derives from the payloads. */
    static OpFactory sameSqlMany(String jdbcUrl, SameSql.Template template) {
        return () -> {
            SameSql sql = new SameSql(transaction(jdbcUrl), template);
            return EnqueueBench.closing(sql, () -> {
                long base = EnqueueBench.SEQUENCE.getAndAdd(1000);
                List<byte[]> payloads = jobs(base, 1000);
                sql.send(payloads, derivedKeys(payloads));
                sql.connection.commit();
            });
        };
    }

    private static List<byte[]> jobs(long base, int n) {
        List<byte[]> payloads = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            payloads.add(EnqueueBench.payload(42, base + i));
        }
        return payloads;
    }

    /** The keys {@code idempotent(true)} derives: "auto:" and 32 hex digits of SHA-256(task, NUL, payload). */
    private static List<String> derivedKeys(List<byte[]> payloads) throws Exception {
        byte[] task = EnqueueBench.TASK.name().getBytes(StandardCharsets.UTF_8);
        List<String> keys = new ArrayList<>(payloads.size());
        for (byte[] payload : payloads) {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(task);
            sha.update((byte) 0);
            sha.update(payload);
            keys.add("auto:" + HexFormat.of().formatHex(sha.digest(), 0, 16));
        }
        return keys;
    }

    /**
     * Fails unless the same-SQL side sends exactly the jobs FlexiQ sends: after FlexiQ has
     * enqueued some jobs, sending the same ones by hand must create nothing and meet no
     * conflict (a replay is compared on the payload, every option and the
     * key retention).
     */
    static void checkSameSql(FlexiQ queue, String jdbcUrl, SameSql.Template template) throws Exception {
        long base = EnqueueBench.SEQUENCE.getAndAdd(10);
        try (Connection c = transaction(jdbcUrl); SameSql sql = new SameSql(transaction(jdbcUrl), template)) {
            List<Order> orders = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                orders.add(new Order(42, base + i));
            }
            queue.enqueue(c, EnqueueBench.TASK, orders.get(0), EnqueueOptions.builder().uniqueKey("conn-" + base).build());
            queue.enqueueMany(c, EnqueueBench.TASK, orders, EnqueueOptions.builder().idempotent(true).build());
            c.commit();
            List<byte[]> payloads = jobs(base, 10);
            int created = sql.send(payloads.subList(0, 1), List.of("conn-" + base))
                    + sql.send(payloads, derivedKeys(payloads));
            sql.connection.rollback();
            if (created != 0) {
                throw new IllegalStateException("the same-SQL side created " + created + " jobs FlexiQ had already enqueued:"
                        + " its keys are not FlexiQ's");
            }
        }
    }

    /** Bare insert: one keyed row per transaction, {@code INSERT … VALUES … ON CONFLICT DO NOTHING}. */
    static OpFactory bareSingle(String jdbcUrl) {
        return () -> {
            Connection c = transaction(jdbcUrl);
            PreparedStatement insert = c.prepareStatement(RAW_ONE);
            return EnqueueBench.closing(c, () -> {
                long n = EnqueueBench.SEQUENCE.incrementAndGet();
                String key = "conn-" + n;
                insert.setBytes(1, EnqueueBench.payload(42, n));
                insert.setBytes(2, EnqueueBench.sha256(key.getBytes(StandardCharsets.UTF_8)));
                insert.setString(3, key);
                drain(insert);
                c.commit();
            });
        };
    }

    /** Bare insert: 1,000 keyed rows in one transaction, one {@code INSERT … SELECT FROM unnest(…)}. */
    static OpFactory bareMany(String jdbcUrl) {
        return () -> {
            Connection c = transaction(jdbcUrl);
            PreparedStatement insert = c.prepareStatement(RAW_MANY);
            return EnqueueBench.closing(c, () -> {
                long base = EnqueueBench.SEQUENCE.getAndAdd(1000);
                byte[][] payloads = new byte[1000][];
                byte[][] digests = new byte[1000][];
                String[] keys = new String[1000];
                for (int i = 0; i < 1000; i++) {
                    payloads[i] = EnqueueBench.payload(42, base + i);
                    keys[i] = "conn-" + (base + i);
                    digests[i] = EnqueueBench.sha256(keys[i].getBytes(StandardCharsets.UTF_8));
                }
                insert.setArray(1, c.createArrayOf("bytea", payloads));
                insert.setArray(2, c.createArrayOf("bytea", digests));
                insert.setArray(3, c.createArrayOf("text", keys));
                drain(insert);
                c.commit();
            });
        };
    }

    private static void drain(PreparedStatement insert) throws SQLException {
        try (ResultSet r = insert.executeQuery()) {
            while (r.next()) {
                r.getLong(1);
            }
        }
    }
}
