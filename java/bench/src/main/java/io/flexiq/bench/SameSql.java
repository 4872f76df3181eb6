package io.flexiq.bench;

import io.flexiq.EnqueueOptions;
import io.flexiq.internal.NativeBridge;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * FlexiQ's statement for keyed entries, exactly as the core prepares it for an application's
 * connection (its text and parameters, learned once from the core), prepared on a plain JDBC
 * connection with the arrays built by hand for each call: "the same SQL" of
 * {@link CallerConnection}. Every parameter but the payloads, the keys' digests and previews
 * and the entries' ranks is the core's own value for a job with default options, repeated.
 */
final class SameSql implements AutoCloseable {
    /** The statement's text and parameters for one keyed job with default options. */
    record Template(String sql, List<NativeBridge.Parameter> params) {
        /** Asks the core to prepare one keyed job, through a client of its own on {@code url}. */
        static Template of(String url) {
            long client = NativeBridge.connect(url, null, null, EnqueueBench.SCHEMA, 1, 5_000, 5_000, false);
            try {
                NativeBridge.Enqueue call = new NativeBridge.Enqueue(1, false);
                call.add(EnqueueBench.TASK.name(), EnqueueBench.payload(42, 0), false, null, "template", false, null,
                        EnqueueOptions.defaults(), null);
                NativeBridge.EnqueueStatement statement = call.prepare(client);
                NativeBridge.discard(statement);
                return new Template(statement.sql(), statement.params());
            } finally {
                NativeBridge.close(client);
            }
        }
    }

    final Connection connection;
    private final Template template;
    private final PreparedStatement prepared;

    /** The statement on {@code connection}, which this closes. */
    SameSql(Connection connection, Template template) throws SQLException {
        this.connection = connection;
        this.template = template;
        this.prepared = connection.prepareStatement(template.sql());
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
        List<Array> arrays = new ArrayList<>();
        int index = 1;
        for (NativeBridge.Parameter p : template.params()) {
            Object[] values = switch (p.name()) {
                case "payload" -> Arrays.stream(order).map(payloads::get).toArray(byte[][]::new);
                case "key_digest" -> Arrays.stream(order).map(i -> digests[i]).toArray(byte[][]::new);
                case "key_preview" -> Arrays.stream(order).map(i -> preview(keys.get(i))).toArray(String[]::new);
                case "id_rank" -> Arrays.stream(order).map(i -> i + 1).toArray(Integer[]::new);
                // The statement's own flag (one element), and each entry's default otherwise.
                case "announce" -> p.elements();
                default -> filled(p.elements(), n);
            };
            Array array = connection.createArrayOf(p.elementType(), values);
            arrays.add(array);
            prepared.setArray(index++, array);
        }
        int created = 0;
        try (ResultSet r = prepared.executeQuery()) {
            while (r.next()) {
                r.getLong(1);
                created += r.getBoolean(2) ? 1 : 0;
                String conflict = r.getString(3);
                if (conflict != null) {
                    throw new IllegalStateException("the same-SQL side asked for a different job than FlexiQ stored: " + conflict);
                }
            }
        }
        for (Array array : arrays) {
            array.free();
        }
        return created;
    }

    /** {@code n} copies of the template's element, in an array of its type. */
    private static Object[] filled(Object[] one, int n) {
        Object[] values = Arrays.copyOf(one, n);
        Arrays.fill(values, one[0]);
        return values;
    }

    private static String preview(String key) {
        return key.substring(0, Math.min(8, key.length() / 3)) + "\u2026";
    }

    @Override
    public void close() throws SQLException {
        prepared.close();
        connection.close();
    }
}
