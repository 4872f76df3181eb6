package io.flexiq.bench;

import io.flexiq.bench.EnqueueBench.OpFactory;
import io.flexiq.bench.EnqueueBench.Workload;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.function.LongFunction;
import java.util.function.LongUnaryOperator;

/**
 * The least SQL that stores the same jobs, for the figures FlexiQ is compared with: a table with
 * only the columns a job needs to be stored and the key's unique index (no triggers, no other
 * index), filled over JDBC by one statement per call, each thread on its own connection in
 * auto-commit. FlexiQ's own statements are not the baseline: they may be the slow part.
 */
final class MinimalSql {
    static final String TABLE = EnqueueBench.SCHEMA + ".minimal_jobs";
    private static final String INSERT = "INSERT INTO " + TABLE + " (queue, task, payload, state, run_at, created_at";
    /** Keyed: the key's scope and SHA-256 go into the unique index, which a held key meets. */
    private static final String ON_CONFLICT = " ON CONFLICT (key_scope, key_digest) WHERE key_digest IS NOT NULL DO NOTHING";
    private static final String KEYED_ONE = INSERT + ", key_scope, key_digest)"
            + " VALUES ('default', ?, ?, 'available', now(), now(), 'default', ?)" + ON_CONFLICT;
    private static final String UNKEYED_ONE = INSERT + ") VALUES ('default', ?, ?, 'available', now(), now())";
    private static final String KEYED_MANY = INSERT + ", key_scope, key_digest)"
            + " SELECT 'default', ?, e.payload, 'available', now(), now(), 'default', e.digest"
            + " FROM unnest(?::bytea[], ?::bytea[]) AS e(payload, digest)" + ON_CONFLICT;
    private static final String UNKEYED_MANY = INSERT + ")"
            + " SELECT 'default', ?, p, 'available', now(), now() FROM unnest(?::bytea[]) AS p";

    private MinimalSql() {}

    /** Creates the table. */
    static void create(String jdbcUrl) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + TABLE + " ("
                    + "id bigserial PRIMARY KEY, queue text NOT NULL, task text NOT NULL, payload bytea NOT NULL,"
                    + " state text NOT NULL, run_at timestamptz NOT NULL, created_at timestamptz NOT NULL,"
                    + " key_scope text, key_digest bytea)");
            s.execute("CREATE UNIQUE INDEX IF NOT EXISTS minimal_jobs_key ON " + TABLE
                    + " (key_scope, key_digest) WHERE key_digest IS NOT NULL");
        }
    }

    /** Inserts the held keys W2 replays ({@code hot-0} … {@code hot-99}). */
    static void seedHeldKeys(String jdbcUrl) throws Exception {
        try (Connection c = DriverManager.getConnection(jdbcUrl); PreparedStatement insert = c.prepareStatement(KEYED_ONE)) {
            for (int k = 0; k < EnqueueBench.HELD_KEYS; k++) {
                bindOne(insert, EnqueueBench.payload(42, k), "hot-" + k);
                insert.executeUpdate();
            }
        }
    }

    /** One thread's calls for {@code workload}. */
    static OpFactory op(String jdbcUrl, Workload workload) {
        return () -> {
            Connection c = DriverManager.getConnection(jdbcUrl);
            return switch (workload) {
                case W1_FRESH -> single(c, KEYED_ONE, n -> "fresh-" + n, n -> n);
                case W2_REPLAY -> single(c, KEYED_ONE,
                        n -> "hot-" + n % EnqueueBench.HELD_KEYS, n -> n % EnqueueBench.HELD_KEYS);
                case W3_UNKEYED -> single(c, UNKEYED_ONE, n -> null, n -> n);
                case W4_UNKEYED -> bulk(c, UNKEYED_MANY, false);
                case W4_KEYED -> bulk(c, KEYED_MANY, true);
            };
        };
    }

    private static EnqueueBench.Op single(Connection c, String sql, LongFunction<String> key, LongUnaryOperator amount)
            throws SQLException {
        PreparedStatement insert = c.prepareStatement(sql);
        return EnqueueBench.closing(c, () -> {
            long n = EnqueueBench.SEQUENCE.incrementAndGet();
            bindOne(insert, EnqueueBench.payload(42, amount.applyAsLong(n)), key.apply(n));
            insert.executeUpdate();
        });
    }

    /** Binds one job: its task, payload and, unless {@code key} is null, the key's SHA-256. */
    private static void bindOne(PreparedStatement insert, byte[] payload, String key) throws Exception {
        insert.setString(1, EnqueueBench.TASK.name());
        insert.setBytes(2, payload);
        if (key != null) {
            insert.setBytes(3, EnqueueBench.sha256(key.getBytes(StandardCharsets.UTF_8)));
        }
    }

    /**
     * 1,000 jobs in one statement. Keyed, each job's key is derived from its payload, as
     * {@code idempotent(true)} does on FlexiQ's side, here as one SHA-256 of the payload.
     */
    private static EnqueueBench.Op bulk(Connection c, String sql, boolean keyed) throws SQLException {
        PreparedStatement insert = c.prepareStatement(sql);
        return EnqueueBench.closing(c, () -> {
            long base = EnqueueBench.SEQUENCE.getAndAdd(EnqueueBench.BATCH);
            byte[][] payloads = new byte[EnqueueBench.BATCH][];
            for (int i = 0; i < EnqueueBench.BATCH; i++) {
                payloads[i] = EnqueueBench.payload(42, base + i);
            }
            insert.setString(1, EnqueueBench.TASK.name());
            insert.setArray(2, c.createArrayOf("bytea", payloads));
            if (keyed) {
                byte[][] digests = new byte[EnqueueBench.BATCH][];
                for (int i = 0; i < EnqueueBench.BATCH; i++) {
                    digests[i] = EnqueueBench.sha256(payloads[i]);
                }
                insert.setArray(3, c.createArrayOf("bytea", digests));
            }
            insert.executeUpdate();
        });
    }
}
