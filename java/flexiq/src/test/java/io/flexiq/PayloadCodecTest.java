package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Payloads encrypted at rest, against a real PostgreSQL: storage, replays, workers, rotation, tampering. */
class PayloadCodecTest {
    /** A payload whose text would stand out anywhere it was stored in clear. */
    record Secret(String note, long cents) {}

    static final Task<Secret> SECRET = Task.of("secret_charge", Secret.class);
    static final String MARKER = "Zebra-Quartz-7781";

    private static byte[] key(int seed) {
        byte[] key = new byte[32];
        Arrays.fill(key, (byte) seed);
        return key;
    }

    private static AesGcmPayloadCodec codec(String encryptWith, String... ids) {
        AesGcmPayloadCodec.Builder b = AesGcmPayloadCodec.builder();
        for (String id : ids) {
            b.key(id, key(id.hashCode()));
        }
        return b.encryptWith(encryptWith).build();
    }

    private static FlexiQ client(String schema, PayloadCodec codec) {
        FlexiQ.Builder b = FlexiQ.builder(TestDatabase.url()).schema(schema).migrate(true);
        return (codec == null ? b : b.payloadCodec(codec)).build();
    }

    private static EnqueueOptions uniqueKey(String key) {
        return EnqueueOptions.builder().uniqueKey(key).build();
    }

    /** The stored payload bytes of a job, read as the database holds them. */
    private static byte[] stored(String schema, String jobId) throws Exception {
        try (Connection c = TestDatabase.jdbc("postgres");
                PreparedStatement s = c.prepareStatement("SELECT payload FROM " + schema + ".jobs WHERE id = ?")) {
            s.setLong(1, Long.parseLong(jobId));
            try (ResultSet r = s.executeQuery()) {
                assertTrue(r.next(), "job " + jobId + " exists");
                return r.getBytes(1);
            }
        }
    }

    /**
     * A dump of the schema: pg_dump's, or where the machine's pg_dump is older than the server
     * (it refuses to dump a server of a later major version, and the tests run against every
     * supported version, FLEXIQ_PG_BIN's binaries holding no pg_dump), the rows of every table
     * of the schema as pg_dump writes them, through COPY TO.
     */
    private static String dump(String schema) throws Exception {
        long server = TestDatabase.scalar("SELECT current_setting('server_version_num')::integer / 10000");
        return pgDumpMajor() >= server ? pgDump(schema) : copyRows(schema);
    }

    /** The major version of the machine's pg_dump; 0 without one. */
    private static long pgDumpMajor() throws Exception {
        Process p;
        try {
            p = new ProcessBuilder("pg_dump", "--version").redirectErrorStream(true).start();
        } catch (java.io.IOException notInstalled) {
            return 0;
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\) (\\d+)").matcher(out);
        return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0 && m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    private static String pgDump(String schema) throws Exception {
        Process p = new ProcessBuilder("pg_dump", "--schema=" + schema, TestDatabase.url())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        p.getInputStream().transferTo(out);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "pg_dump succeeded");
        return out.toString(StandardCharsets.ISO_8859_1);
    }

    private static String copyRows(String schema) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (Connection c = TestDatabase.jdbc("postgres");
                PreparedStatement tables = c.prepareStatement(
                        "SELECT format('%I.%I', schemaname, tablename) FROM pg_tables WHERE schemaname = ?")) {
            tables.setString(1, schema);
            org.postgresql.copy.CopyManager copy = c.unwrap(org.postgresql.PGConnection.class).getCopyAPI();
            try (ResultSet r = tables.executeQuery()) {
                while (r.next()) {
                    copy.copyOut("COPY " + r.getString(1) + " TO STDOUT", out);
                }
            }
        }
        return out.toString(StandardCharsets.ISO_8859_1);
    }

    @Test
    void storedPayloadsAreCiphertextEvenInADumpAndDifferEachTime() throws Exception {
        String schema = TestDatabase.freshSchema();
        try (FlexiQ queue = client(schema, codec("k1", "k1"))) {
            String a = queue.enqueue(SECRET, new Secret(MARKER, 1));
            String b = queue.enqueue(SECRET, new Secret(MARKER, 1));
            List<Secret> bulk = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                bulk.add(new Secret(MARKER + "-" + i, i));
            }
            queue.enqueueMany(SECRET, bulk, EnqueueOptions.defaults());
            queue.enqueue(SECRET, new Secret(MARKER, 2), EnqueueOptions.builder().idempotencyKey("order-2").build());
            try (Connection c = TestDatabase.jdbc("postgres")) {
                c.setAutoCommit(false);
                queue.enqueue(c, SECRET, new Secret(MARKER, 3), EnqueueOptions.defaults());
                c.commit();
            }

            assertFalse(Arrays.equals(stored(schema, a), stored(schema, b)), "two encodings of one payload differ");
            String dump = dump(schema);
            assertTrue(dump.contains("aes-256-gcm"), "the dump holds the jobs");
            assertFalse(dump.contains(MARKER), "no payload's text is in the dump");
            assertFalse(dump.contains("Zebra"), "no payload's text is in the dump");
            assertEquals(Optional.of("{\"cents\":1,\"note\":\"" + MARKER + "\"}"), queue.getPayload(a));
            assertEquals(Optional.of("aes-256-gcm"), queue.getJob(a).orElseThrow().payloadCodec());
        }
    }

    @Test
    void derivedKeysDoNotDependOnTheCodec() {
        Task<Secret> once = SECRET.idempotent(true);
        Secret payload = new Secret(MARKER, 9);
        try (FlexiQ clear = client(TestDatabase.freshSchema(), null);
                FlexiQ encrypted = client(TestDatabase.freshSchema(), codec("k1", "k1"))) {
            JobInfo plain = clear.getJob(clear.enqueue(once, payload)).orElseThrow();
            JobInfo coded = encrypted.getJob(encrypted.enqueue(once, payload)).orElseThrow();
            assertEquals(plain.keyDigest(), coded.keyDigest());
            assertEquals(plain.keyPreview(), coded.keyPreview());
            assertEquals(Optional.empty(), plain.payloadCodec());
            assertEquals(Optional.of("aes-256-gcm"), coded.payloadCodec());
            // Keyed again from another client with another key: the same key, so a replay.
            try (FlexiQ rotated = client(encrypted.schema(), codec("k2", "k1", "k2"))) {
                EnqueueResult again = rotated.enqueueWithResult(once, payload, EnqueueOptions.defaults());
                assertEquals(EnqueueOutcome.REPLAYED, again.outcome());
                assertEquals(coded.id(), again.jobId());
            }
        }
    }

    @Test
    void derivedKeysUnderACodecAreTheVectorsKeys() throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        List<EnqueueRequest<?>> requests = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (JsonNode v : VectorsTest.vectors()) {
            if (v.get("name").asText().equals("float_min_subnormal")) {
                continue; // Java writes Double.MIN_VALUE with a digit more (see VectorsTest)
            }
            Task<JsonNode> task = Task.of(v.get("task").asText(), JsonNode.class).idempotent(true);
            requests.add(EnqueueRequest.of(task, mapper.readTree(v.get("payload").asText()), EnqueueOptions.defaults()));
            keys.add(v.get("key").asText());
        }
        try (FlexiQ queue = client(TestDatabase.freshSchema(), codec("k1", "k1"))) {
            List<EnqueueResult> results = queue.enqueueManyWithResults(requests);
            for (int i = 0; i < keys.size(); i++) {
                JobInfo job = queue.getJob(results.get(i).jobId()).orElseThrow();
                assertEquals(EnqueueTest.sha256Hex(keys.get(i)), job.keyDigest().orElseThrow(), keys.get(i));
                assertEquals(Optional.of("aes-256-gcm"), job.payloadCodec());
            }
        }
    }

    @Test
    void replaysMatchOnTheSerializedPayloadAndAChangedOneConflicts() {
        String schema = TestDatabase.freshSchema();
        try (FlexiQ queue = client(schema, codec("k1", "k1"))) {
            EnqueueResult first = queue.enqueueWithResult(SECRET, new Secret(MARKER, 5), uniqueKey("order-5"));
            EnqueueResult replay = queue.enqueueWithResult(SECRET, new Secret(MARKER, 5), uniqueKey("order-5"));
            assertEquals(EnqueueOutcome.ACCEPTED, first.outcome());
            assertEquals(EnqueueOutcome.REPLAYED, replay.outcome());
            assertEquals(first.jobId(), replay.jobId());

            IdempotencyConflictException conflict = assertThrows(IdempotencyConflictException.class,
                    () -> queue.enqueue(SECRET, new Secret(MARKER, 6), uniqueKey("order-5")));
            assertEquals(List.of("payload"), conflict.fields());
            // In a batch too: the replay and the conflict are told apart the same way.
            List<EnqueueResult> batch = queue.enqueueManyWithResults(List.of(
                    EnqueueRequest.of(SECRET, new Secret(MARKER, 5), uniqueKey("order-5")),
                    EnqueueRequest.of(SECRET, new Secret(MARKER, 7), uniqueKey("order-7"))));
            assertEquals(EnqueueOutcome.REPLAYED, batch.get(0).outcome());
            assertEquals(EnqueueOutcome.ACCEPTED, batch.get(1).outcome());
            IdempotencyConflictException inBatch = assertThrows(IdempotencyConflictException.class,
                    () -> queue.enqueueMany(List.of(
                            EnqueueRequest.of(SECRET, new Secret(MARKER, 8), uniqueKey("order-8")),
                            EnqueueRequest.of(SECRET, new Secret(MARKER, 0), uniqueKey("order-7")))));
            assertEquals(List.of("payload"), inBatch.fields());
            assertEquals(Optional.empty(), queue.findByKey("default", "order-8"), "the refused batch wrote nothing");
        }
        // A job stored before the codec was set is replayed through it (its digest is SHA-256).
        String before = TestDatabase.freshSchema();
        try (FlexiQ clear = client(before, null); FlexiQ coded = client(before, codec("k1", "k1"))) {
            String id = clear.enqueue(SECRET, new Secret(MARKER, 11), uniqueKey("order-11"));
            EnqueueResult replay = coded.enqueueWithResult(SECRET, new Secret(MARKER, 11), uniqueKey("order-11"));
            assertEquals(EnqueueOutcome.REPLAYED, replay.outcome());
            assertEquals(id, replay.jobId());
        }
    }

    @Test
    void aKeyedFingerprintStillRecognizesReplays() throws Exception {
        AesGcmPayloadCodec keyed = AesGcmPayloadCodec.builder().key("k1", key(1)).fingerprintKey(key(7)).build();
        String schema = TestDatabase.freshSchema();
        try (FlexiQ queue = client(schema, keyed)) {
            String id = queue.enqueue(SECRET, new Secret(MARKER, 1), uniqueKey("order-1"));
            assertEquals(EnqueueOutcome.REPLAYED,
                    queue.enqueueWithResult(SECRET, new Secret(MARKER, 1), uniqueKey("order-1")).outcome());
            try (Connection c = TestDatabase.jdbc("postgres");
                    PreparedStatement s = c.prepareStatement(
                            "SELECT payload_digest FROM " + schema + ".jobs WHERE id = ?")) {
                s.setLong(1, Long.parseLong(id));
                try (ResultSet r = s.executeQuery()) {
                    r.next();
                    byte[] plainSha = java.security.MessageDigest.getInstance("SHA-256")
                            .digest("{\"cents\":1,\"note\":\"Zebra-Quartz-7781\"}".getBytes(StandardCharsets.UTF_8));
                    assertEquals(32, r.getBytes(1).length);
                    assertFalse(Arrays.equals(plainSha, r.getBytes(1)), "the stored digest is keyed, not a bare SHA-256");
                }
            }
        }
    }

    @Test
    void workersDecodeAcrossARotationAndAMissingKeyFailsClearly() throws Exception {
        String schema = TestDatabase.freshSchema();
        EnqueueOptions once = EnqueueOptions.builder().maxAttempts(1).build();
        String underK1;
        String underK2;
        String clear;
        try (FlexiQ before = client(schema, null)) {
            clear = before.enqueue(SECRET, new Secret("stored in clear", 0), once);
        }
        try (FlexiQ old = client(schema, codec("k1", "k1"))) {
            underK1 = old.enqueue(SECRET, new Secret("under k1", 1), once);
        }
        Map<String, String> handled = new ConcurrentHashMap<>();
        try (FlexiQ rotated = client(schema, codec("k2", "k1", "k2"))) {
            underK2 = rotated.enqueue(SECRET, new Secret("under k2", 2), once);
            Worker worker = rotated.worker().handle(SECRET, (s, job) -> handled.put(job.jobId(), s.note())).build()
                    .start();
            try {
                WorkerTest.await("the three jobs handled", () -> handled.size() == 3);
            } finally {
                worker.close();
            }
        }
        assertEquals(Map.of(clear, "stored in clear", underK1, "under k1", underK2, "under k2"), handled);

        // k1 dropped too early: its jobs fail, naming the job and the key, and never reach the handler.
        String orphan;
        try (FlexiQ old = client(schema, codec("k1", "k1"))) {
            orphan = old.enqueue(SECRET, new Secret("under k1 again", 3), once);
        }
        AtomicInteger calls = new AtomicInteger();
        try (FlexiQ onlyK2 = client(schema, codec("k2", "k2"))) {
            String fine = onlyK2.enqueue(SECRET, new Secret("fine", 4), once);
            Worker worker = onlyK2.worker().handle(SECRET, (s, job) -> calls.incrementAndGet()).build().start();
            try {
                WorkerTest.await("the orphan dead", () -> onlyK2.getJob(orphan).orElseThrow().state() == JobState.DEAD);
                WorkerTest.await("the other completed",
                        () -> onlyK2.getJob(fine).orElseThrow().state() == JobState.COMPLETED);
            } finally {
                worker.close();
            }
            assertEquals(1, calls.get(), "only the decodable job reached the handler");
            String error = onlyK2.getJob(orphan).orElseThrow().lastError().orElseThrow();
            assertTrue(error.contains("PayloadDecodeException"), error);
            assertTrue(error.contains("job " + orphan), error);
            assertTrue(error.contains("'k1'"), error);
            PayloadDecodeException shown = assertThrows(PayloadDecodeException.class, () -> onlyK2.getPayload(orphan));
            assertTrue(shown.getMessage().contains("'k1'"), shown.getMessage());
        }
        try (FlexiQ noCodec = client(schema, null)) {
            PayloadDecodeException e = assertThrows(PayloadDecodeException.class, () -> noCodec.getPayload(underK2));
            assertTrue(e.getMessage().contains("aes-256-gcm") && e.getMessage().contains("has no codec"), e.getMessage());
        }
    }

    /** A second codec, for changing codecs: reverses the bytes (no secrecy; only another id). */
    static final class Reversing implements PayloadCodec {
        @Override
        public String id() {
            return "reversing";
        }

        @Override
        public byte[] encode(String task, byte[] payload) {
            byte[] out = new byte[payload.length];
            for (int i = 0; i < payload.length; i++) {
                out[i] = payload[payload.length - 1 - i];
            }
            return out;
        }

        @Override
        public byte[] decode(String task, byte[] stored) {
            return encode(task, stored);
        }
    }

    @Test
    void aCodecCanBeChangedOrDroppedWhileItsJobsWait() throws Exception {
        String schema = TestDatabase.freshSchema();
        AesGcmPayloadCodec aes = codec("k1", "k1");
        String underAes;
        try (FlexiQ before = client(schema, aes)) {
            underAes = before.enqueue(SECRET, new Secret("under aes", 1));
        }
        Map<String, String> handled = new ConcurrentHashMap<>();
        try (FlexiQ changed = FlexiQ.builder(TestDatabase.url()).schema(schema).payloadCodec(new Reversing())
                .decodePayloadsWith(aes).build()) {
            String reversed = changed.enqueue(SECRET, new Secret("reversed", 2));
            assertEquals(Optional.of("reversing"), changed.getJob(reversed).orElseThrow().payloadCodec());
            Worker worker = changed.worker().handle(SECRET, (s, job) -> handled.put(job.jobId(), s.note())).build()
                    .start();
            try {
                WorkerTest.await("both handled", () -> handled.size() == 2);
            } finally {
                worker.close();
            }
            assertEquals(Map.of(underAes, "under aes", reversed, "reversed"), handled);
        }
        // Encryption dropped: new jobs are stored as serialized, old ones still decode.
        try (FlexiQ dropped = FlexiQ.builder(TestDatabase.url()).schema(schema).decodePayloadsWith(aes).build()) {
            String clear = dropped.enqueue(SECRET, new Secret("clear", 3));
            assertEquals(Optional.empty(), dropped.getJob(clear).orElseThrow().payloadCodec());
            assertEquals(Optional.of("{\"cents\":1,\"note\":\"under aes\"}"), dropped.getPayload(underAes));
            PayloadDecodeException unknown = assertThrows(PayloadDecodeException.class,
                    () -> dropped.getPayload(handled.keySet().stream().filter(id -> !id.equals(underAes)).findFirst()
                            .orElseThrow()));
            assertTrue(unknown.getMessage().contains("payload codec reversing")
                    && unknown.getMessage().contains("decodes only with aes-256-gcm"), unknown.getMessage());
        }
        assertThrows(IllegalArgumentException.class,
                () -> FlexiQ.builder(TestDatabase.url()).decodePayloadsWith(aes).decodePayloadsWith(codec("k2", "k2")));
    }

    @Test
    void aTamperedPayloadFailsItsAttemptAndNothingElse() throws Exception {
        String schema = TestDatabase.freshSchema();
        EnqueueOptions once = EnqueueOptions.builder().maxAttempts(2)
                .retryPolicy(RetryPolicy.fixed(Duration.ZERO)).build();
        Set<String> seen = ConcurrentHashMap.newKeySet();
        try (FlexiQ queue = client(schema, codec("k1", "k1"))) {
            String tampered = queue.enqueue(SECRET, new Secret(MARKER, 1), once);
            String intact = queue.enqueue(SECRET, new Secret(MARKER, 2), once);
            byte[] bytes = stored(schema, tampered);
            int last = bytes.length - 1;
            TestDatabase.execute("UPDATE " + schema + ".jobs SET payload = set_byte(payload, " + last
                    + ", get_byte(payload, " + last + ") # 1) WHERE id = " + tampered);
            Worker worker = queue.worker().handle(SECRET, (s, job) -> seen.add(job.jobId())).build().start();
            try {
                WorkerTest.await("the tampered job dead after its attempts",
                        () -> queue.getJob(tampered).orElseThrow().state() == JobState.DEAD);
                WorkerTest.await("the intact one completed",
                        () -> queue.getJob(intact).orElseThrow().state() == JobState.COMPLETED);
            } finally {
                worker.close();
            }
            assertEquals(Set.of(intact), seen);
            JobInfo dead = queue.getJob(tampered).orElseThrow();
            assertEquals(2, dead.attempt());
            String error = dead.lastError().orElseThrow();
            assertTrue(error.contains("job " + tampered) && error.contains("does not authenticate under key 'k1'"),
                    error);
            assertThrows(PayloadDecodeException.class, () -> queue.getPayload(tampered));
        }
    }

    @Test
    void aDebounceReplacesTheEncryptedPayloadWithTheLatest() throws Exception {
        String schema = TestDatabase.freshSchema();
        EnqueueOptions debounced = EnqueueOptions.builder().uniqueKey("burst").debounce(Duration.ofHours(1)).build();
        try (FlexiQ queue = client(schema, codec("k1", "k1"))) {
            String id = queue.enqueue(SECRET, new Secret("first", 1), debounced);
            EnqueueResult second = queue.enqueueWithResult(SECRET, new Secret("second " + MARKER, 2), debounced);
            assertEquals(EnqueueOutcome.REPLACED, second.outcome());
            assertEquals(id, second.jobId());
            assertEquals(Optional.of("{\"cents\":2,\"note\":\"second " + MARKER + "\"}"), queue.getPayload(id));
            assertFalse(new String(stored(schema, id), StandardCharsets.ISO_8859_1).contains(MARKER));
        }
    }

    @Test
    void aBatchOnTheApplicationsConnectionStaysOneStatement() throws Exception {
        String schema = TestDatabase.freshSchema();
        AtomicInteger statements = new AtomicInteger();
        try (FlexiQ queue = client(schema, codec("k1", "k1")); Connection real = TestDatabase.jdbc("postgres")) {
            real.setAutoCommit(false);
            // Counts every statement the driver is asked to prepare or create.
            Connection counted = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                    new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                        if (method.getName().equals("prepareStatement") || method.getName().equals("createStatement")
                                || method.getName().equals("prepareCall")) {
                            statements.incrementAndGet();
                        }
                        try {
                            return method.invoke(real, args);
                        } catch (java.lang.reflect.InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            List<Secret> bulk = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                bulk.add(new Secret(MARKER, i));
            }
            List<String> ids = queue.enqueueMany(counted, SECRET, bulk, EnqueueOptions.defaults());
            real.commit();
            assertEquals(1, statements.get(), "200 encrypted entries in one statement");
            assertEquals(200, ids.size());
            assertEquals(Optional.of("{\"cents\":199,\"note\":\"" + MARKER + "\"}"), queue.getPayload(ids.get(199)));
            assertArrayEquals(new byte[] {1}, Arrays.copyOf(stored(schema, ids.get(0)), 1), "format version 1");
        }
    }
}
