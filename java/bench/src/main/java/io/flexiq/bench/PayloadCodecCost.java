package io.flexiq.bench;

import io.flexiq.AesGcmPayloadCodec;
import io.flexiq.FlexiQ;
import io.flexiq.PayloadCodec;
import io.flexiq.test.PostgresServer;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Locale;

/**
 * What a payload codec costs a batch enqueue: 1,000 jobs a call through the Java API without a
 * codec, with a codec that stores the payload as it is (FlexiQ's own work for a codec: the
 * canonical bytes brought to Java, the codec called, its output carried), and with
 * {@link AesGcmPayloadCodec} (that work and the encryption), on three clients of one schema.
 * Within a round the three run in turn after the jobs are emptied; best of the rounds.
 */
final class PayloadCodecCost {
    private PayloadCodecCost() {}

    /** Stores the serialized payload as it is: the codec path with nothing done on it. */
    private static final class AsIs implements PayloadCodec {
        @Override
        public String id() {
            return "as-is";
        }

        @Override
        public byte[] encode(String task, byte[] payload) {
            return payload;
        }

        @Override
        public byte[] decode(String task, byte[] stored) {
            return stored;
        }
    }

    static void measure(PostgresServer pg, String jdbcUrl, double seconds, int rounds) throws Exception {
        byte[] key = new byte[AesGcmPayloadCodec.KEY_BYTES];
        new SecureRandom().nextBytes(key);
        try (FlexiQ plain = client(pg, null);
                FlexiQ asIs = client(pg, new AsIs());
                FlexiQ aes = client(pg, AesGcmPayloadCodec.builder().key("bench", key).build())) {
            System.out.printf(Locale.ROOT, "%nA payload codec, 1,000 jobs per call through the Java API, jobs per second:%n");
            System.out.printf(Locale.ROOT, "%-28s %7s %18s %18s %18s %13s %13s%n", "workload", "threads",
                    "no codec (load)", "as-is codec (load)", "AES-GCM (load)", "as-is / none", "AES / none");
            for (EnqueueBench.Workload w : new EnqueueBench.Workload[] {
                    EnqueueBench.Workload.W4_UNKEYED, EnqueueBench.Workload.W4_KEYED}) {
                for (int threads : w.threads) {
                    EnqueueBench.Figure[] f = EnqueueBench.best(rounds, () -> emptyJobs(jdbcUrl),
                            () -> w.jobsPerCall * EnqueueBench.run(threads, seconds, () -> EnqueueBench.apiOp(plain, w)),
                            () -> w.jobsPerCall * EnqueueBench.run(threads, seconds, () -> EnqueueBench.apiOp(asIs, w)),
                            () -> w.jobsPerCall * EnqueueBench.run(threads, seconds, () -> EnqueueBench.apiOp(aes, w)));
                    System.out.printf(Locale.ROOT, "%-28s %7d %18s %18s %18s %13s %13s%n", w.label, threads,
                            EnqueueBench.cell(f[0]), EnqueueBench.cell(f[1]), EnqueueBench.cell(f[2]),
                            EnqueueBench.ratio(f[1], f[0]), EnqueueBench.ratio(f[2], f[0]));
                }
            }
        }
    }

    private static FlexiQ client(PostgresServer pg, PayloadCodec codec) {
        FlexiQ.Builder b = FlexiQ.builder(pg.url()).schema(EnqueueBench.SCHEMA);
        return (codec == null ? b : b.payloadCodec(codec)).build();
    }

    private static void emptyJobs(String jdbcUrl) throws Exception {
        try (Connection c = DriverManager.getConnection(jdbcUrl); Statement s = c.createStatement()) {
            s.execute("TRUNCATE " + EnqueueBench.SCHEMA + ".jobs CASCADE");
        }
    }
}
