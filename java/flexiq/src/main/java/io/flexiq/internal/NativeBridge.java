package io.flexiq.internal;

import io.flexiq.EnqueueOptions;
import io.flexiq.EnqueueOutcome;
import io.flexiq.BulkResult;
import io.flexiq.JobCount;
import io.flexiq.AttemptInfo;
import io.flexiq.JobFilter;
import io.flexiq.PausedQueue;
import io.flexiq.RegisteredWorker;
import io.flexiq.JobState;
import io.flexiq.Maintenance;
import io.flexiq.MaintenanceReport;
import io.flexiq.NativeLibraryException;
import io.flexiq.NonReplaceableReason;
import io.flexiq.PasswordSupplier;
import io.flexiq.RedriveResult;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Every native method of FlexiQ, and the layout of each call's request and response.
 *
 * <p>Every native has one shape, {@code static native byte[] name(long handle, byte[] request)}:
 * the handle is the client's (0 for calls that need none), the request and the response are one
 * message each in the {@link Wire} format. The library binds them when it loads
 * ({@code RegisterNatives} in {@code JNI_OnLoad}), so a library that does not fit this class
 * fails to load rather than failing at a first call. Loading happens once, at first use; a
 * loading failure is kept and thrown again from every later call.
 *
 * <p>Not part of the public API: callers go through {@code io.flexiq}, which validates arguments
 * and resolves dedup keys before calling here. Only the resolved key crosses, or the request to
 * derive it from the payload; never the {@code idempotent} flag or where the key came from.
 */
public final class NativeBridge {
    private static String loadedFrom;
    /** Password suppliers of connected clients, by the number the native library asks with. */
    private static final Map<Long, PasswordSupplier> PASSWORDS = new ConcurrentHashMap<>();
    private static final Map<Long, Long> SUPPLIER_OF_CLIENT = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_SUPPLIER = new AtomicLong();
    private static final NativeLibraryException LOAD_FAILURE = load();

    private NativeBridge() {}

    private static NativeLibraryException load() {
        try {
            loadedFrom = NativeLibraryLoader.fromSystemProperties().load();
            return null;
        } catch (NativeLibraryException e) {
            return e;
        }
    }

    /** Where the native library was loaded from. */
    public static String loadedFrom() {
        ensureLoaded();
        return loadedFrom;
    }

    /** Throws the kept loading failure, if there was one. */
    public static void ensureLoaded() {
        if (LOAD_FAILURE != null) {
            throw new NativeLibraryException(LOAD_FAILURE.getMessage(), LOAD_FAILURE);
        }
    }

    private static Wire.Reader reader(byte[] response) {
        return new Wire.Reader(response);
    }

    /**
     * What the native library reports about itself: its code tables (table name to constant name
     * to code), the natives it binds (name to JNI signature), and the fields of an enqueue entry
     * it reads (name and wire kind), in order.
     */
    public record Description(Map<String, Map<String, Integer>> codes, Map<String, String> natives,
            List<String[]> enqueueFields) {}

    /** The native library's code tables and natives, for the test that keeps both sides in step. */
    public static Description describe() {
        ensureLoaded();
        Wire.Reader r = reader(nativeDescribe(0, null));
        Map<String, Map<String, Integer>> codes = new LinkedHashMap<>();
        for (int t = r.i32(); t > 0; t--) {
            String table = r.string();
            Map<String, Integer> entries = new LinkedHashMap<>();
            for (int n = r.i32(); n > 0; n--) {
                entries.put(r.string(), r.i32());
            }
            codes.put(table, entries);
        }
        Map<String, String> natives = new LinkedHashMap<>();
        for (int n = r.i32(); n > 0; n--) {
            natives.put(r.string(), r.string());
        }
        List<String[]> enqueueFields = new ArrayList<>();
        for (int n = r.i32(); n > 0; n--) {
            enqueueFields.add(new String[] {r.string(), r.string()});
        }
        return new Description(codes, natives, enqueueFields);
    }

    /** RFC 8785 canonical form of a JSON text. */
    public static byte[] canonicalJson(byte[] json) {
        return canonicalJson(new byte[][] {json})[0];
    }

    /** RFC 8785 canonical form of each JSON text, in one call. */
    public static byte[][] canonicalJson(byte[][] jsons) {
        ensureLoaded();
        int size = 16;
        for (byte[] json : jsons) {
            size += 4 + (json == null ? 0 : json.length);
        }
        Wire.Writer w = new Wire.Writer(size).i32(jsons.length);
        for (byte[] json : jsons) {
            w.bytes(json);
        }
        Wire.Reader r = reader(nativeCanonicalJson(0, w.toBytes()));
        byte[][] canonical = new byte[r.i32()][];
        for (int i = 0; i < canonical.length; i++) {
            canonical[i] = r.bytes();
        }
        return canonical;
    }

    /** The auto-derived key of a task name and serialized payload. */
    public static String autoKey(String taskName, byte[] payload) {
        ensureLoaded();
        Wire.Writer w = new Wire.Writer(64 + (payload == null ? 0 : payload.length)).string(taskName).bytes(payload);
        return reader(nativeAutoKey(0, w.toBytes())).string();
    }

    /**
     * Connects a client; returns its handle.
     *
     * @param directUrl a URL that reaches PostgreSQL without a pooler that shares sessions, for
     *     wake-ups and the maintenance election, or null
     * @param password asked at every new connection, or null for the URL's password
     */
    public static long connect(String url, String directUrl, PasswordSupplier password, String schema, int poolSize,
            long connectTimeoutMillis, long acquireTimeoutMillis, boolean migrate) {
        ensureLoaded();
        long supplier = 0;
        if (password != null) {
            supplier = NEXT_SUPPLIER.incrementAndGet();
            PASSWORDS.put(supplier, password);
        }
        Wire.Writer w = new Wire.Writer(128).string(url).string(directUrl).i64(supplier).string(schema).i32(poolSize)
                .i64(connectTimeoutMillis).i64(acquireTimeoutMillis).bool(migrate);
        try {
            long client = reader(nativeConnect(0, w.toBytes())).i64();
            if (supplier != 0) {
                SUPPLIER_OF_CLIENT.put(client, supplier);
            }
            return client;
        } catch (RuntimeException | Error e) {
            PASSWORDS.remove(supplier);
            throw e;
        }
    }

    /**
     * Called by the native library, on the thread opening a connection, for the password of the
     * supplier registered under {@code supplier}; what the supplier throws goes back to it.
     */
    static String password(long supplier) throws Exception {
        PasswordSupplier source = PASSWORDS.get(supplier);
        if (source == null) {
            throw new IllegalStateException("the client asking for a password is closed");
        }
        return source.password();
    }

    /** Forgets a client handle; its connections close once running calls return. */
    public static void close(long client) {
        ensureLoaded();
        nativeClose(client, null);
        Long supplier = SUPPLIER_OF_CLIENT.remove(client);
        if (supplier != null) {
            PASSWORDS.remove(supplier);
        }
    }

    /** Drops the client's schema with everything in it. */
    public static void dropSchema(long client) {
        ensureLoaded();
        nativeDropSchema(client, null);
    }

    /** Applies missing migrations and changed definitions; returns how many ran. */
    public static int migrate(long client) {
        ensureLoaded();
        return reader(nativeMigrate(client, null)).i32();
    }

    /** How many migrations and definitions the schema has not applied. */
    public static int pendingMigrations(long client) {
        ensureLoaded();
        return reader(nativePendingMigrations(client, null)).i32();
    }

    /**
     * One enqueue call being written: entries are added one by one and sent together, as one
     * statement. Each entry carries its resolved key, or asks the native core to derive the
     * key from the payload; and its payload, or JSON for the core to put in canonical form
     * first. A derived-key enqueue of JSON thus crosses JNI once. The fields of an entry are
     * {@link EnqueueFields}'s, checked against the library's before the first call.
     */
    public static final class Enqueue {
        private final int size;
        private final boolean describeKeys;
        private final Wire.Writer w;
        private int added;

        /**
         * A call for {@code size} entries.
         *
         * @param describeKeys whether the results carry each entry's key preview and digest
         */
        public Enqueue(int size, boolean describeKeys) {
            this.size = size;
            this.describeKeys = describeKeys;
            this.w = new Wire.Writer(64 + size * 160).bool(describeKeys).i32(size);
        }

        /**
         * Adds an entry.
         *
         * @param canonicalize whether {@code payload} is JSON to put in canonical form first
         * @param encoded what the client's payload codec made of {@code payload}, stored in its
         *     place, or null; {@code payload} is then serialized already ({@code canonicalize}
         *     false), for the key
         * @param key the resolved key, or null
         * @param deriveKey whether the key is the auto key of the (canonical) payload
         * @param keyRetention how long the key stays bound past acceptance as the caller resolved
         *     it from the kind of key, or null (not {@code options.keyRetention()}: that is only
         *     what the call asked)
         * @param traceContext the trace context to store with the job (a JSON object), or null
         */
        public void add(String task, byte[] payload, boolean canonicalize, Encoded encoded, String key,
                boolean deriveKey, Duration keyRetention, EnqueueOptions options, String traceContext) {
            if (added == size) {
                throw new IllegalStateException("this enqueue has room for " + size + " entries");
            }
            added++;
            EnqueueFields.write(w, new EnqueueFields.Entry(task, payload, canonicalize, encoded, key, deriveKey,
                    keyRetention, options, traceContext));
        }

        /** Sends the entries in one native call; the results are in input order. */
        public Enqueued send(long client) {
            return enqueued(nativeEnqueue(client, complete()), describeKeys);
        }

        /**
         * The statement that enqueues the entries, for the caller to run on a connection of its
         * own; touches no database. Pass its rows to {@link #resolve}.
         */
        public EnqueueStatement prepare(long client) {
            Wire.Reader r = reader(nativePrepareEnqueue(client, complete()));
            String sql = r.string();
            int n = r.i32();
            List<Parameter> params = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String name = r.string();
                String type = r.string();
                int count = r.i32();
                Object[] elements = switch (type) {
                    case "bytea" -> fill(new byte[count][], r::bytes);
                    case "text" -> fill(new String[count], r::string);
                    case "int4" -> fill(new Integer[count], () -> r.bool() ? Integer.valueOf(r.i32()) : null);
                    case "int8" -> fill(new Long[count], r::optI64);
                    case "float8" -> fill(new Double[count], () -> r.bool() ? Double.valueOf(r.f64()) : null);
                    case "bool" -> fill(new Boolean[count], () -> r.bool() ? Boolean.valueOf(r.bool()) : null);
                    default -> throw new IllegalStateException("unknown parameter type " + type
                            + "; the FlexiQ jar and its native library must come from one build");
                };
                params.add(new Parameter(name, type, elements));
            }
            return new EnqueueStatement(sql, params, r.i64(), describeKeys);
        }


        /** Reads every element of one parameter. */
        private static <T> T[] fill(T[] elements, Supplier<T> next) {
            for (int i = 0; i < elements.length; i++) {
                elements[i] = next.get();
            }
            return elements;
        }

        private byte[] complete() {
            if (added != size) {
                throw new IllegalStateException("enqueue has " + added + " of " + size + " entries");
            }
            checkLayout();
            return w.toBytes();
        }

        private static Enqueued enqueued(byte[] response, boolean describeKeys) {
            Wire.Reader r = reader(response);
            int n = r.i32();
            long[] ids = new long[n];
            EnqueueOutcome[] outcomes = new EnqueueOutcome[n];
            NonReplaceableReason[] reasons = new NonReplaceableReason[n];
            String[] previews = describeKeys ? new String[n] : null;
            String[] digests = describeKeys ? new String[n] : null;
            for (int i = 0; i < n; i++) {
                ids[i] = r.i64();
                outcomes[i] = Codes.ENQUEUE_OUTCOME.of(r.i32());
                int reason = r.i32();
                reasons[i] = reason == 0 ? null : Codes.NON_REPLACEABLE_REASON.of(reason);
                if (describeKeys) {
                    previews[i] = r.string();
                    digests[i] = r.string();
                }
            }
            return new Enqueued(ids, outcomes, reasons, previews, digests);
        }
    }

    /** Whether the entry layout was found to be the library's (see {@link EnqueueFields}). */
    private static volatile boolean layoutChecked;

    private static void checkLayout() {
        if (!layoutChecked) {
            EnqueueFields.check(describe().enqueueFields());
            layoutChecked = true;
        }
    }

    /**
     * The jobs an enqueue resolved to, and how (with a reason, or null), in input order; when the
     * call asked for them, the preview and SHA-256 (hex) of each entry's key, or null for an
     * entry without one (else the two arrays are null).
     */
    public record Enqueued(long[] jobIds, EnqueueOutcome[] outcomes, NonReplaceableReason[] reasons,
            String[] keyPreviews, String[] keyDigests) {}

    /**
     * An enqueue statement: its text, with {@code ?} placeholders, its parameters in order, and
     * the native handle of the pending enqueue, which either {@link #resolve} or
     * {@link #discard} must be given.
     */
    public record EnqueueStatement(String sql, List<Parameter> params, long pending, boolean describeKeys) {}

    /**
     * The jobs a prepared enqueue resolved to, from the rows its statement returned; a conflict
     * row throws {@code IdempotencyConflictException} as {@link Enqueue#send} would. Ends the
     * pending enqueue.
     */
    public static Enqueued resolve(EnqueueStatement statement, List<EnqueueRow> rows) {
        Wire.Writer w = new Wire.Writer(8 + rows.size() * 16).i32(rows.size());
        for (EnqueueRow row : rows) {
            w.i64(row.jobId()).bool(row.created()).string(row.conflict()).string(row.decision());
        }
        return Enqueue.enqueued(nativeResolveEnqueue(statement.pending(), w.toBytes()), statement.describeKeys());
    }

    /** Ends a prepared enqueue whose statement failed. */
    public static void discard(EnqueueStatement statement) {
        nativeDiscardEnqueue(statement.pending(), null);
    }

    /**
     * One parameter: its name in the statement, and an array of a PostgreSQL element type
     * ({@code bytea}, {@code text}, {@code int4}, {@code int8}, {@code float8} or {@code bool},
     * as {@code Connection.createArrayOf} takes them) whose Java elements are {@code byte[]},
     * {@code String}, {@code Integer}, {@code Long}, {@code Double} or {@code Boolean}, null
     * where absent.
     */
    public record Parameter(String name, String elementType, Object[] elements) {}

    /**
     * One row of an enqueue statement: a job, whether it was created, a conflict or null, and the
     * decision on a debounced or throttled key or null.
     */
    public record EnqueueRow(long jobId, boolean created, String conflict, String decision) {}

    /** Microseconds since the Unix epoch, as the core takes times. */
    public static long micros(Instant at) {
        return Math.addExact(Math.multiplyExact(at.getEpochSecond(), 1_000_000L), at.getNano() / 1_000);
    }

    private static Instant instant(long micros) {
        return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
    }

    private static Instant instant(Long micros) {
        return micros == null ? null : instant(micros.longValue());
    }

    /** A job as the core reads it; null fields are absent. */
    public record Job(long id, String queue, String task, JobState state, int priority, int attempt,
            int maxAttempts, List<String> tags, Instant runAt, Instant createdAt, Instant startedAt,
            Instant finishedAt, String keyScope, String keyPreview, String keyDigest, boolean keyHeld,
            String lastError, String payloadCodec) {}

    /** The job, or null. */
    public static Job getJob(long client, long jobId) {
        ensureLoaded();
        return foundJob(reader(nativeGetJob(client, new Wire.Writer(8).i64(jobId).toBytes())));
    }

    /** The job holding {@code key} in {@code scope}, else the latest that held it, or null. */
    public static Job findByKey(long client, String scope, String key) {
        ensureLoaded();
        Wire.Writer w = new Wire.Writer(64 + key.length() * 3).string(scope).string(key);
        return foundJob(reader(nativeFindByKey(client, w.toBytes())));
    }

    /** One page of jobs, and the cursor of the next, or null. */
    public record Page(List<Job> jobs, String nextCursor) {}

    /** One page of jobs, newest first; {@code state} null for any, the others null when unset. */
    public static Page listJobs(long client, String queue, JobState state, String task, int limit, String after) {
        ensureLoaded();
        Wire.Writer w = new Wire.Writer(128).string(queue).i32(state == null ? 0 : Codes.JOB_STATE.codeOf(state))
                .string(task).i32(limit).string(after);
        Wire.Reader r = reader(nativeListJobs(client, w.toBytes()));
        int n = r.i32();
        List<Job> jobs = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            jobs.add(job(r));
        }
        return new Page(jobs, r.string());
    }

    /** Jobs completed and dead-lettered in one minute of one queue. */
    public record Finished(String queue, Instant minute, long completed, long dead) {}

    /** Jobs finished per queue and minute over the last {@code windowMillis}. */
    public static List<Finished> throughput(long client, long windowMillis) {
        ensureLoaded();
        Wire.Reader r = reader(nativeThroughput(client, new Wire.Writer(8).i64(windowMillis).toBytes()));
        int n = r.i32();
        List<Finished> rows = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            rows.add(new Finished(r.string(), instant(r.i64()), r.i64(), r.i64()));
        }
        return rows;
    }

    /**
     * A payload as a payload codec encoded it: the codec's id, what it made of the serialized
     * payload, and its digest of the serialized payload, by which replays are compared.
     */
    public record Encoded(String codec, byte[] bytes, byte[] digest) {}

    /** A job's task and payload as stored, and the id of the codec that encoded it, or null for none. */
    public record StoredPayload(String task, byte[] bytes, String codec) {}

    /** The payload of a job as stored, or null if there is no such job. */
    public static StoredPayload getPayload(long client, long jobId) {
        ensureLoaded();
        Wire.Reader r = reader(nativeGetPayload(client, jobId(jobId)));
        return r.bool() ? new StoredPayload(r.string(), r.bytes(), r.string()) : null;
    }

    /** A job after its found flag, or null. */
    private static Job foundJob(Wire.Reader r) {
        return r.bool() ? job(r) : null;
    }

    private static Job job(Wire.Reader r) {
        long id = r.i64();
        String queue = r.string();
        String task = r.string();
        JobState state = Codes.JOB_STATE.of(r.i32());
        int priority = r.i32();
        int attempt = r.i32();
        int maxAttempts = r.i32();
        List<String> tags = new ArrayList<>();
        for (int n = r.i32(); n > 0; n--) {
            tags.add(r.string());
        }
        Instant runAt = instant(r.i64());
        Instant createdAt = instant(r.i64());
        Instant startedAt = instant(r.optI64());
        Instant finishedAt = instant(r.optI64());
        return new Job(id, queue, task, state, priority, attempt, maxAttempts, tags, runAt, createdAt, startedAt,
                finishedAt, r.string(), r.string(), r.string(), r.bool(), r.string(),
                r.string());
    }

    /**
     * Jobs by queue and state: pending, running and dead ones, and completed and cancelled ones
     * that finished within the last {@code finishedWithinMillis}.
     */
    public static List<JobCount> countJobs(long client, long finishedWithinMillis) {
        ensureLoaded();
        Wire.Reader r = reader(nativeCountJobs(client, new Wire.Writer(8).i64(finishedWithinMillis).toBytes()));
        int n = r.i32();
        List<JobCount> counts = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            counts.add(new JobCount(r.string(), Codes.JOB_STATE.of(r.i32()), r.i64()));
        }
        return counts;
    }

    private static byte[] jobId(long jobId) {
        return new Wire.Writer(8).i64(jobId).toBytes();
    }

    /** Cancels a pending job; false if it does not exist or is not pending. */
    public static boolean cancel(long client, long jobId) {
        ensureLoaded();
        return reader(nativeCancel(client, jobId(jobId))).bool();
    }

    /** Deletes a job that is not running; false if it does not exist or is running. */
    public static boolean purge(long client, long jobId) {
        ensureLoaded();
        return reader(nativePurge(client, jobId(jobId))).bool();
    }

    /** Completes a pending or running job without running it; false if it does not exist or has finished. */
    public static boolean markCompleted(long client, long jobId) {
        ensureLoaded();
        return reader(nativeMarkCompleted(client, jobId(jobId))).bool();
    }

    /** Grants {@code role} what a producer needs on the client's schema. */
    public static void grantProducer(long client, String role) {
        ensureLoaded();
        nativeGrantProducer(client, new Wire.Writer(64).string(role).toBytes());
    }

    /** Grants {@code role} what a worker needs on the client's schema. */
    public static void grantWorker(long client, String role) {
        ensureLoaded();
        nativeGrantWorker(client, new Wire.Writer(64).string(role).toBytes());
    }

    /** Sets the rate limit of a queue ({@code ofQueue}) or of a concurrency key. */
    public static void setRateLimit(long client, boolean ofQueue, String name, int starts, Duration period) {
        ensureLoaded();
        nativeSetRateLimit(client, new Wire.Writer(64).bool(ofQueue).string(name).i32(starts)
                .i64(period.toMillis()).toBytes());
    }

    /** Removes the rate limit of a queue ({@code ofQueue}) or of a concurrency key; whether it had one. */
    public static boolean removeRateLimit(long client, boolean ofQueue, String name) {
        ensureLoaded();
        return reader(nativeRemoveRateLimit(client, new Wire.Writer(64).bool(ofQueue).string(name).toBytes())).bool();
    }

    /** How many jobs the filter selects now. */
    public static long countMatching(long client, JobFilter filter) {
        ensureLoaded();
        return reader(nativeCountMatching(client, filter(new Wire.Writer(128), filter).toBytes())).i64();
    }

    /** Runs bulk action {@code action} (1 cancel, 2 purge, 3 redrive under {@code redriveKey}). */
    public static BulkResult bulk(long client, int action, JobFilter filter, String redriveKey) {
        ensureLoaded();
        Wire.Writer w = filter(new Wire.Writer(128).i32(action), filter).string(redriveKey);
        Wire.Reader r = reader(nativeBulk(client, w.toBytes()));
        return new BulkResult(r.i64(), r.i64(), r.i64());
    }

    private static Wire.Writer filter(Wire.Writer w, JobFilter f) {
        return w.i32(Codes.JOB_STATE.codeOf(f.state())).string(f.queue().orElse(null)).string(f.task().orElse(null))
                .optI64(f.createdFrom().isPresent(), f.createdFrom().map(NativeBridge::micros).orElse(0L))
                .optI64(f.createdBefore().isPresent(), f.createdBefore().map(NativeBridge::micros).orElse(0L));
    }

    /** The attempts of a job, oldest first. */
    public static List<AttemptInfo> attempts(long client, long jobId) {
        ensureLoaded();
        Wire.Reader r = reader(nativeAttempts(client, jobId(jobId)));
        int n = r.i32();
        List<AttemptInfo> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(new AttemptInfo(r.i32(), instant(r.i64()), Optional.ofNullable(instant(r.optI64())),
                    Optional.ofNullable(r.string()), r.string(), Optional.ofNullable(r.string())));
        }
        return out;
    }

    /** A schedule's declaration as stored. */
    public record Declared(String name, String cron, String zone, String task, String queue, boolean triggerable,
            Instant seenAt, Instant pausedAt) {}

    /** Declares a schedule or renews its declaration; whether it is paused. */
    public static boolean declareSchedule(long client, String name, String cron, String zone, String task,
            String queue, byte[] payload, String options) {
        ensureLoaded();
        Wire.Writer w = new Wire.Writer(256).string(name).string(cron).string(zone).string(task).string(queue)
                .bytes(payload).string(options);
        return reader(nativeDeclareSchedule(client, w.toBytes())).bool();
    }

    /** The declared schedules, by name. */
    public static List<Declared> listSchedules(long client) {
        ensureLoaded();
        Wire.Reader r = reader(nativeListSchedules(client, null));
        int n = r.i32();
        List<Declared> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(new Declared(r.string(), r.string(), r.string(), r.string(), r.string(), r.bool(),
                    instant(r.i64()), instant(r.optI64())));
        }
        return out;
    }

    /** Pauses or resumes a schedule; whether that changed it. */
    public static boolean pauseSchedule(long client, String name, boolean paused) {
        ensureLoaded();
        return reader(nativePauseSchedule(client, new Wire.Writer(64).string(name).bool(paused).toBytes())).bool();
    }

    /** Triggers a schedule under a tick key; its job id and outcome, or null when it cannot be. */
    public static String[] triggerSchedule(long client, String name, String tickKey, long retentionMillis) {
        ensureLoaded();
        Wire.Reader r = reader(nativeTriggerSchedule(client, new Wire.Writer(128).string(name).string(tickKey)
                .i64(retentionMillis).toBytes()));
        return r.bool() ? new String[] {Long.toString(r.i64()), r.string()} : null;
    }

    /** Pauses a queue; false if it was paused already. */
    public static boolean pauseQueue(long client, String queue) {
        ensureLoaded();
        return reader(nativePauseQueue(client, new Wire.Writer(64).string(queue).toBytes())).bool();
    }

    /** Resumes a queue and wakes its idle workers; false if it was not paused. */
    public static boolean resumeQueue(long client, String queue) {
        ensureLoaded();
        return reader(nativeResumeQueue(client, new Wire.Writer(64).string(queue).toBytes())).bool();
    }

    /** The paused queues, by name. */
    public static List<PausedQueue> pausedQueues(long client) {
        ensureLoaded();
        Wire.Reader r = reader(nativePausedQueues(client, null));
        int n = r.i32();
        List<PausedQueue> paused = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            paused.add(new PausedQueue(r.string(), instant(r.i64())));
        }
        return paused;
    }

    /** Registers a worker, or renews its registration. */
    public static void heartbeat(long client, String id, String name, String[] queues, String[] tasks,
            int concurrency, long leaseMillis, long startedAtMicros) {
        ensureLoaded();
        nativeHeartbeat(client, new Wire.Writer(256).string(id).string(name).strings(queues).strings(tasks)
                .i32(concurrency).i64(leaseMillis).i64(startedAtMicros).toBytes());
    }

    /** Removes a worker's registration. */
    public static void deregister(long client, String id) {
        ensureLoaded();
        nativeDeregister(client, new Wire.Writer(64).string(id).toBytes());
    }

    /** The registered workers. */
    public static List<RegisteredWorker> listWorkers(long client) {
        ensureLoaded();
        Wire.Reader r = reader(nativeListWorkers(client, null));
        int n = r.i32();
        List<RegisteredWorker> workers = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String id = r.string();
            String name = r.string();
            String host = r.string();
            long pid = r.i64();
            List<String> queues = strings(r);
            List<String> tasks = strings(r);
            workers.add(new RegisteredWorker(id, name, host, pid, queues, tasks, r.i32(), Duration.ofMillis(r.i64()),
                    r.string(), instant(r.i64()), instant(r.i64())));
        }
        return workers;
    }

    private static List<String> strings(Wire.Reader r) {
        int n = r.i32();
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(r.string());
        }
        return out;
    }

    /** Releases the keys whose retention has passed; returns how many. */
    public static long expireKeys(long client) {
        ensureLoaded();
        return reader(nativeExpireKeys(client, null)).i64();
    }

    /**
     * Runs a maintenance pass if this client's session holds its schema's maintenance lock,
     * trying for the lock first when it does not.
     */
    public static Maintained maintain(long client, Maintenance options) {
        ensureLoaded();
        Wire.Reader r = reader(nativeMaintain(client, retention(options)));
        return switch (r.i32()) {
            case 0 -> new Maintained(maintenancePass(r), true);
            case 1 -> new Maintained(null, true);
            default -> new Maintained(null, false);
        };
    }

    /**
     * A tick of {@link #maintain}: the pass this client ran, or null when another client runs
     * maintenance; {@code permitted} false when this client's role may not delete jobs or
     * release their keys, so that it never takes part.
     */
    public record Maintained(MaintenancePass pass, boolean permitted) {}

    /** Runs a maintenance pass now, through the pool, whichever client holds the lock. */
    public static MaintenancePass runMaintenance(long client, Maintenance options) {
        ensureLoaded();
        return maintenancePass(reader(nativeRunMaintenance(client, retention(options))));
    }

    /** Closes this client's maintenance session, freeing the lock if it held it. */
    public static void resignMaintenance(long client) {
        ensureLoaded();
        nativeResignMaintenance(client, null);
    }

    /** What a maintenance pass did, and the jobs it moved, for the logs and listeners. */
    public record MaintenancePass(MaintenanceReport report, List<Rescued> rescued) {}

    private static byte[] retention(Maintenance m) {
        return new Wire.Writer(32).i64(m.completedRetention().toMillis()).i64(m.cancelledRetention().toMillis())
                .i64(m.deadRetention().toMillis()).i64(m.batchSize()).toBytes();
    }

    private static MaintenancePass maintenancePass(Wire.Reader r) {
        long keysReleased = r.i64();
        List<Rescued> rescued = rescued(r);
        long completed = r.i64();
        long cancelled = r.i64();
        long dead = r.i64();
        long workersRemoved = r.i64();
        boolean more = r.bool();
        int deadLettered = (int) rescued.stream().filter(Rescued::dead).count();
        return new MaintenancePass(new MaintenanceReport(keysReleased, rescued.size() - deadLettered, deadLettered,
                completed, cancelled, dead, workersRemoved, more), rescued);
    }

    /** Redrives a dead job. */
    public static RedriveResult redrive(long client, long jobId, String redriveKey) {
        ensureLoaded();
        Wire.Reader r = reader(nativeRedrive(client, new Wire.Writer(64).i64(jobId).string(redriveKey).toBytes()));
        return new RedriveResult(Codes.REDRIVE_OUTCOME.of(r.i32()), Optional.ofNullable(r.optI64()).map(String::valueOf));
    }

    /**
     * Claims up to {@code limit} (at most {@code ids.length}) due jobs of these queues and tasks
     * under a lease, marked with {@code token}, into the output arrays (queue and task as indexes
     * into the arrays passed; timeout {@code Long.MIN_VALUE} when none; the payload as stored, with
     * the id of the codec that encoded it or null; how long each waited from its due time to the
     * claim, in µs; the trace context it was enqueued in, a JSON object, or null); returns how many.
     */
    public static int claim(long client, String[] queues, String[] tasks, int limit, long leaseMillis, long token,
            long[] ids, int[] attempts, int[] maxAttempts, long[] timeoutMillis, int[] queueIndexes,
            int[] taskIndexes, byte[][] payloads, String[] payloadCodecs, long[] waitedMicros,
            String[] traceContexts) {
        ensureLoaded();
        byte[] request = claimRequest(queues, tasks, Math.min(limit, ids.length), leaseMillis, token);
        return readClaimed(nativeClaim(client, request), ids, attempts, maxAttempts, timeoutMillis, queueIndexes,
                taskIndexes, payloads, payloadCodecs, waitedMicros, traceContexts);
    }

    /**
     * The jobs the claim marked {@code token} took and that still run that attempt, their leases
     * renewed, into the output arrays as {@link #claim} writes them; returns how many.
     */
    public static int recoverClaim(long client, String[] queues, String[] tasks, long leaseMillis, long token,
            long[] ids, int[] attempts, int[] maxAttempts, long[] timeoutMillis, int[] queueIndexes,
            int[] taskIndexes, byte[][] payloads, String[] payloadCodecs, long[] waitedMicros,
            String[] traceContexts) {
        ensureLoaded();
        byte[] request = claimRequest(queues, tasks, ids.length, leaseMillis, token);
        return readClaimed(nativeRecoverClaim(client, request), ids, attempts, maxAttempts, timeoutMillis,
                queueIndexes, taskIndexes, payloads, payloadCodecs, waitedMicros, traceContexts);
    }

    private static byte[] claimRequest(String[] queues, String[] tasks, int limit, long leaseMillis, long token) {
        return new Wire.Writer(128).strings(queues).strings(tasks).i32(limit).i64(leaseMillis).i64(token).toBytes();
    }

    private static int readClaimed(byte[] response, long[] ids, int[] attempts, int[] maxAttempts,
            long[] timeoutMillis, int[] queueIndexes, int[] taskIndexes, byte[][] payloads, String[] payloadCodecs,
            long[] waitedMicros, String[] traceContexts) {
        Wire.Reader r = reader(response);
        int n = r.i32();
        for (int i = 0; i < n; i++) {
            ids[i] = r.i64();
            attempts[i] = r.i32();
            maxAttempts[i] = r.i32();
            Long timeout = r.optI64();
            timeoutMillis[i] = timeout == null ? Long.MIN_VALUE : timeout;
            queueIndexes[i] = r.i32();
            taskIndexes[i] = r.i32();
            payloads[i] = r.bytes();
            payloadCodecs[i] = r.string();
            waitedMicros[i] = r.i64();
            traceContexts[i] = r.string();
        }
        return n;
    }

    /** A list of attempts: (job id, attempt number) each; a call may append more fields. */
    private static Wire.Writer attempts(long[] ids, int[] attempts) {
        if (ids.length != attempts.length) {
            throw new IllegalArgumentException(ids.length + " job ids for " + attempts.length + " attempts");
        }
        Wire.Writer w = new Wire.Writer(16 + 12 * ids.length).i32(ids.length);
        for (int i = 0; i < ids.length; i++) {
            w.i64(ids[i]).i32(attempts[i]);
        }
        return w;
    }

    private static long[] ids(byte[] response) {
        Wire.Reader r = reader(response);
        long[] ids = new long[r.i32()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = r.i64();
        }
        return ids;
    }

    /**
     * Completes the attempts' jobs; returns those recorded: attempts that still held their job,
     * and (late) attempts whose lease had passed while no later attempt started.
     */
    public static Recorded complete(long client, long[] ids, int[] attempts) {
        ensureLoaded();
        Wire.Reader r = reader(nativeComplete(client, attempts(ids, attempts).toBytes()));
        int n = r.i32();
        long[] recorded = new long[n];
        boolean[] late = new boolean[n];
        for (int i = 0; i < n; i++) {
            recorded[i] = r.i64();
            late[i] = r.bool();
        }
        return new Recorded(recorded, late);
    }

    /** The jobs whose completions were recorded, and for each whether it came after a rescue. */
    public record Recorded(long[] ids, boolean[] late) {}

    /** Extends the attempts' leases; returns the ids whose attempt still holds the job. */
    public static long[] extendLeases(long client, long[] ids, int[] attempts, long leaseMillis) {
        ensureLoaded();
        return ids(nativeExtendLeases(client, attempts(ids, attempts).i64(leaseMillis).toBytes()));
    }

    /**
     * Records a failed attempt; null when a later attempt of the job has started (the failure is
     * not recorded).
     */
    public static Failed fail(long client, long id, int attempt, String error) {
        ensureLoaded();
        int room = 16 + (error == null ? 0 : 3 * error.length());
        Wire.Reader r = reader(nativeFail(client, new Wire.Writer(room).i64(id).i32(attempt).text(error).toBytes()));
        if (!r.bool()) {
            return null;
        }
        JobState state = Codes.JOB_STATE.of(r.i32());
        long runAt = r.i64();
        return new Failed(state == JobState.DEAD, runAt, r.bool());
    }

    /**
     * Where a recorded failure left its job: dead, or due again at {@code dueMicros} (since the
     * epoch); {@code late} when it was recorded after the attempt's lease passed and a rescue
     * had moved the job.
     */
    public record Failed(boolean dead, long dueMicros, boolean late) {}

    /** Where the jobs {@code ids} stand now (those that still exist): to say why an outcome was refused. */
    public static List<JobAttempt> attemptsNow(long client, long[] ids) {
        ensureLoaded();
        Wire.Writer w = new Wire.Writer(8 + 8 * ids.length).i32(ids.length);
        for (long id : ids) {
            w.i64(id);
        }
        Wire.Reader r = reader(nativeAttemptsNow(client, w.toBytes()));
        int n = r.i32();
        List<JobAttempt> now = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            now.add(new JobAttempt(r.i64(), r.i32(), Codes.JOB_STATE.of(r.i32())));
        }
        return now;
    }

    /** A job's latest attempt number (0 before the first) and its state. */
    public record JobAttempt(long id, int attempt, JobState state) {}

    /** Puts back to work the running jobs whose lease has passed; returns them. */
    public static List<Rescued> rescueExpired(long client) {
        ensureLoaded();
        return rescued(reader(nativeRescueExpired(client, null)));
    }

    private static List<Rescued> rescued(Wire.Reader r) {
        int n = r.i32();
        List<Rescued> rescued = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            rescued.add(new Rescued(r.i64(), r.string(), r.string(), r.i32(), r.i32(), r.bool(), r.bool(), r.string()));
        }
        return rescued;
    }

    /**
     * A job whose lease passed, put back to work or, its attempts spent, dead-lettered; or
     * ({@code late}) a waiting job dead-lettered because its deadline passed.
     */
    public record Rescued(long id, String queue, String task, int attempt, int maxAttempts, boolean dead,
            boolean late, String error) {}

    /**
     * Gives back unfinished attempts; their jobs are due again and the attempts do not count.
     * Returns the ids of the jobs given back (whose attempt still held them).
     */
    public static long[] returnAttempts(long client, long[] ids, int[] attempts) {
        ensureLoaded();
        return ids(nativeReturnAttempts(client, attempts(ids, attempts).toBytes()));
    }

    /** Stores a checkpoint while the attempt holds its job; false when it no longer does. */
    public static boolean saveCheckpoint(long client, long id, int attempt, String name, byte[] value) {
        ensureLoaded();
        Wire.Writer w = new Wire.Writer(64 + (value == null ? 0 : value.length)).i64(id).i32(attempt).string(name)
                .bytes(value);
        return reader(nativeSaveCheckpoint(client, w.toBytes())).bool();
    }

    /** A job's checkpoint, or null. */
    public static byte[] checkpoint(long client, long id, String name) {
        ensureLoaded();
        Wire.Reader r = reader(nativeCheckpoint(client, new Wire.Writer(64).i64(id).string(name).toBytes()));
        return r.bool() ? r.bytes() : null;
    }

    /**
     * The statements a handler runs on a connection of the application's, in its transaction,
     * with JDBC's placeholders: completing its attempt's job (an int8 array and an int4 array of
     * one element each; a row when the attempt held the job), and storing a checkpoint (job id,
     * attempt, name, value; one row when the attempt held the job), values of at most
     * {@code maxCheckpointBytes}.
     */
    public record TransactionStatements(String complete, String saveCheckpoint, int maxCheckpointBytes) {}

    /** The client's {@link TransactionStatements}. */
    public static TransactionStatements transactionStatements(long client) {
        ensureLoaded();
        Wire.Reader r = reader(nativeTransactionStatements(client, null));
        return new TransactionStatements(r.string(), r.string(), r.i32());
    }

    /** The client's wake-up generation; starts its listener on first use. */
    public static long workGeneration(long client) {
        ensureLoaded();
        return reader(nativeWorkGeneration(client, null)).i64();
    }

    /** Waits until the wake-up generation moves past {@code seen}, or the timeout; returns it. */
    public static long awaitWork(long client, long seen, long timeoutMillis) {
        ensureLoaded();
        return reader(nativeAwaitWork(client, new Wire.Writer(16).i64(seen).i64(timeoutMillis).toBytes())).i64();
    }

    /** Wakes the client's waiting workers. */
    public static void wakeWorkers(long client) {
        ensureLoaded();
        nativeWakeWorkers(client, null);
    }

    // Cron schedules: ticks and tick keys come from the core, so that every binding agrees.

    /** The latest tick of a cron expression at or before an instant (null if none), and the first after it. */
    public record CronTicks(Instant latest, Instant next) {}

    /** The ticks of {@code expression} in {@code zone} around {@code at}; refuses a bad expression or zone. */
    public static CronTicks cronTicks(String expression, String zone, Instant at) {
        ensureLoaded();
        Wire.Writer w = new Wire.Writer(64).string(expression).string(zone).i64(micros(at));
        Wire.Reader r = reader(nativeCronTicks(0, w.toBytes()));
        Long latest = r.optI64();
        return new CronTicks(instant(latest), instant(r.i64()));
    }

    /** The dedup key of a schedule's tick. */
    public static String tickKey(String scheduleName, Instant tick) {
        ensureLoaded();
        return reader(nativeTickKey(0, new Wire.Writer(64).string(scheduleName).i64(micros(tick)).toBytes())).string();
    }

    private static native byte[] nativeCronTicks(long none, byte[] request);

    private static native byte[] nativeTickKey(long none, byte[] request);

    private static native byte[] nativeDescribe(long none, byte[] request);

    private static native byte[] nativeCanonicalJson(long none, byte[] request);

    private static native byte[] nativeAutoKey(long none, byte[] request);

    private static native byte[] nativeConnect(long none, byte[] request);

    private static native byte[] nativeClose(long client, byte[] request);

    private static native byte[] nativeMigrate(long client, byte[] request);

    private static native byte[] nativeDropSchema(long client, byte[] request);

    private static native byte[] nativeEnqueue(long client, byte[] request);

    private static native byte[] nativePrepareEnqueue(long client, byte[] request);

    private static native byte[] nativeResolveEnqueue(long pending, byte[] request);

    private static native byte[] nativeDiscardEnqueue(long pending, byte[] request);

    private static native byte[] nativeGetJob(long client, byte[] request);

    private static native byte[] nativeCountJobs(long client, byte[] request);

    private static native byte[] nativeFindByKey(long client, byte[] request);

    private static native byte[] nativeListJobs(long client, byte[] request);

    private static native byte[] nativeThroughput(long client, byte[] request);

    private static native byte[] nativeGetPayload(long client, byte[] request);

    private static native byte[] nativePendingMigrations(long client, byte[] request);

    private static native byte[] nativeCancel(long client, byte[] request);

    private static native byte[] nativePurge(long client, byte[] request);

    private static native byte[] nativeMarkCompleted(long client, byte[] request);

    private static native byte[] nativeExpireKeys(long client, byte[] request);

    private static native byte[] nativeMaintain(long client, byte[] request);

    private static native byte[] nativeRunMaintenance(long client, byte[] request);

    private static native byte[] nativeResignMaintenance(long client, byte[] request);

    private static native byte[] nativeSetRateLimit(long client, byte[] request);

    private static native byte[] nativeRemoveRateLimit(long client, byte[] request);

    private static native byte[] nativePauseQueue(long client, byte[] request);

    private static native byte[] nativeResumeQueue(long client, byte[] request);

    private static native byte[] nativePausedQueues(long client, byte[] request);

    private static native byte[] nativeListWorkers(long client, byte[] request);

    private static native byte[] nativeAttempts(long client, byte[] request);

    private static native byte[] nativeCountMatching(long client, byte[] request);

    private static native byte[] nativeBulk(long client, byte[] request);

    private static native byte[] nativeDeclareSchedule(long client, byte[] request);

    private static native byte[] nativeListSchedules(long client, byte[] request);

    private static native byte[] nativePauseSchedule(long client, byte[] request);

    private static native byte[] nativeTriggerSchedule(long client, byte[] request);

    private static native byte[] nativeHeartbeat(long client, byte[] request);

    private static native byte[] nativeDeregister(long client, byte[] request);

    private static native byte[] nativeRedrive(long client, byte[] request);

    private static native byte[] nativeGrantProducer(long client, byte[] request);

    private static native byte[] nativeGrantWorker(long client, byte[] request);

    private static native byte[] nativeClaim(long client, byte[] request);

    private static native byte[] nativeRecoverClaim(long client, byte[] request);

    private static native byte[] nativeComplete(long client, byte[] request);

    private static native byte[] nativeExtendLeases(long client, byte[] request);

    private static native byte[] nativeFail(long client, byte[] request);

    private static native byte[] nativeRescueExpired(long client, byte[] request);

    private static native byte[] nativeAttemptsNow(long client, byte[] request);

    private static native byte[] nativeReturnAttempts(long client, byte[] request);

    private static native byte[] nativeSaveCheckpoint(long client, byte[] request);

    private static native byte[] nativeCheckpoint(long client, byte[] request);

    private static native byte[] nativeTransactionStatements(long client, byte[] request);

    private static native byte[] nativeWorkGeneration(long client, byte[] request);

    private static native byte[] nativeAwaitWork(long client, byte[] request);

    private static native byte[] nativeWakeWorkers(long client, byte[] request);
}
