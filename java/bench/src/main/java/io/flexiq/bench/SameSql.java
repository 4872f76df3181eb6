package io.flexiq.bench;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;

/**
 * FlexiQ's keyed enqueue statements ({@code enqueue_one_keyed.sql} for one job,
 * {@code enqueue_keyed.sql} for a batch, read at run time), prepared on a plain JDBC
 * connection, with the arrays the core would send built by hand: "the same SQL" of
 * {@link CallerConnection}.
 */
final class SameSql implements AutoCloseable {
    /**
     * The parameters {@link #send} binds: the fifteen job columns with the flow options, the
     * payload codec's id and digest, then the keys' four.
     */
    private static final int PARAMETERS = 21;

    final Connection connection;
    private final CoreStatement one;
    private final CoreStatement keyed;

    /** The statements on {@code connection}, which this closes. */
    SameSql(Connection connection) throws Exception {
        this.connection = connection;
        one = statement(connection, "enqueue_one_keyed.sql");
        keyed = statement(connection, "enqueue_keyed.sql");
    }

    private static CoreStatement statement(Connection connection, String file) throws Exception {
        CoreStatement st = new CoreStatement(connection, file, EnqueueBench.SCHEMA);
        if (st.parameterCount() != PARAMETERS) {
            st.close();
            throw new IllegalStateException(file + " now takes " + st.parameterCount() + " parameters where the"
                    + " benchmark binds " + PARAMETERS + ": make SameSql.send bind what the statement takes");
        }
        return st;
    }

    /**
     * Sends keyed entries (distinct keys) as one statement. Returns how many jobs it created; a
     * conflict (a key held for a different request) means these are not the jobs FlexiQ would
     * send, and fails.
     */
    int send(List<byte[]> payloads, List<String> keys) throws Exception {
        int n = payloads.size();
        Integer[] order = new Integer[n];
        byte[][] digests = new byte[n][];
        for (int i = 0; i < n; i++) {
            order[i] = i;
            digests[i] = EnqueueBench.sha256(keys.get(i).getBytes(StandardCharsets.UTF_8));
        }
        // Keys go in digest order, as the core sends them.
        Arrays.sort(order, (a, b) -> Arrays.compareUnsigned(digests[a], digests[b]));
        CoreStatement st = n == 1 ? one : keyed;
        st.setArray(1, connection.createArrayOf("bytea", Arrays.stream(order).map(payloads::get).toArray(byte[][]::new)));
        st.setArray(2, connection.createArrayOf("text", filled(n, "default")));
        st.setArray(3, connection.createArrayOf("text", filled(n, EnqueueBench.TASK.name())));
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
        st.setArray(15, connection.createArrayOf("text", new String[n]));
        st.setArray(16, connection.createArrayOf("text", new String[n]));
        st.setArray(17, connection.createArrayOf("bytea", new byte[n][]));
        st.setArray(18, connection.createArrayOf("text", filled(n, "default")));
        st.setArray(19, connection.createArrayOf("bytea", Arrays.stream(order).map(i -> digests[i]).toArray(byte[][]::new)));
        st.setArray(20, connection.createArrayOf("text", Arrays.stream(order).map(i -> preview(keys.get(i))).toArray()));
        st.setArray(21, connection.createArrayOf("int4", Arrays.stream(order).map(i -> i + 1).toArray()));
        int created = 0;
        try (ResultSet r = st.prepared.executeQuery()) {
            while (r.next()) {
                r.getLong(1);
                created += r.getBoolean(2) ? 1 : 0;
                String conflict = r.getString(3);
                if (conflict != null) {
                    throw new IllegalStateException("the same-SQL side asked for a different job than FlexiQ stored: " + conflict);
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
