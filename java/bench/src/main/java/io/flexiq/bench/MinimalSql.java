package io.flexiq.bench;

import io.flexiq.bench.EnqueueBench.Workload;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The least SQL that stores the same jobs, for the figures FlexiQ is compared with: a table with
 * only the columns a job needs to be stored and the key's unique index (no triggers, no other
 * index), filled by one statement per call driven by {@link Pgbench}. FlexiQ's own statements
 * are not the baseline: they may be the slow part.
 */
final class MinimalSql {
    static final String TABLE = EnqueueBench.SCHEMA + ".minimal_jobs";
    private static final String INSERT = "INSERT INTO " + TABLE + " (queue, task, payload, state, run_at, created_at";
    /** Keyed: the key's scope and SHA-256 go into the unique index, which a held key meets. */
    private static final String ON_CONFLICT = " ON CONFLICT (key_scope, key_digest) WHERE key_digest IS NOT NULL DO NOTHING";
    private static final String KEYED_ONE = INSERT + ", key_scope, key_digest)"
            + " VALUES ('default', ?, ?, 'available', now(), now(), 'default', ?)" + ON_CONFLICT;
    /** The payload of job {@code :n} as FlexiQ stores it (see {@link EnqueueBench#payload}), in SQL. */
    private static final String PAYLOAD = "convert_to('{\"amountCents\":' || %s || ',\"customerId\":42}', 'UTF8')";

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
                insert.setString(1, EnqueueBench.TASK.name());
                insert.setBytes(2, EnqueueBench.payload(42, k));
                insert.setBytes(3, EnqueueBench.sha256(("hot-" + k).getBytes(StandardCharsets.UTF_8)));
                insert.executeUpdate();
            }
        }
    }

    /**
     * The pgbench script of one call of {@code workload}: one statement, in auto-commit. Fresh keys
     * and payloads come from a random number drawn per call (pgbench has no shared counter; a
     * repeat among 10^15 would only make one call a replay), and each key's SHA-256 is computed by
     * the server, which FlexiQ's callers compute themselves. W4 makes its 1,000 rows in the server
     * from {@code generate_series}, which no client can undercut.
     */
    static String script(Workload workload) {
        String task = "'" + EnqueueBench.TASK.name() + "'";
        String values = " VALUES ('default', " + task + ", " + PAYLOAD.formatted(":n") + ", 'available', now(), now()";
        String many = " SELECT 'default', " + task + ", " + PAYLOAD.formatted("(:n::bigint + g)")
                + ", 'available', now(), now()";
        String rows = " FROM generate_series(1, " + EnqueueBench.BATCH + ") g";
        String statement = switch (workload) {
            case W1_FRESH -> INSERT + ", key_scope, key_digest)" + values
                    + ", 'default', sha256(('fresh-' || :n)::bytea))" + ON_CONFLICT;
            case W2_REPLAY -> INSERT + ", key_scope, key_digest)"
                    + " VALUES ('default', " + task + ", " + PAYLOAD.formatted(":k") + ", 'available', now(), now(),"
                    + " 'default', sha256(('hot-' || :k)::bytea))" + ON_CONFLICT;
            case W3_UNKEYED -> INSERT + ")" + values + ")";
            case W4_UNKEYED -> INSERT + ")" + many + rows;
            case W4_KEYED -> INSERT + ", key_scope, key_digest)" + many + ", 'default', sha256("
                    + PAYLOAD.formatted("(:n::bigint + g)") + ")" + rows + ON_CONFLICT;
        };
        return "\\set n random(1, 1000000000000000)\n"
                + "\\set k random(0, " + (EnqueueBench.HELD_KEYS - 1) + ")\n"
                + statement + ";\n";
    }
}
