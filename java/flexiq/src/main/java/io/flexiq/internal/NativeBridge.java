package io.flexiq.internal;

import io.flexiq.NativeLibraryException;

/**
 * Every native entry point of FlexiQ, and nothing else. Loading happens once, at first use; a
 * loading failure is kept and thrown again from every later call.
 *
 * <p>Not part of the public API: callers go through {@code io.flexiq}, which validates arguments
 * and resolves dedup keys before calling here. No native method takes the {@code idempotent}
 * flag or the {@code idempotencyKey}: only the resolved key crosses.
 */
public final class NativeBridge {
    private static String loadedFrom;
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

    /** RFC 8785 canonical form of a JSON text. */
    public static byte[] canonicalJson(byte[] json) {
        ensureLoaded();
        return nativeCanonicalJson(json);
    }

    /** The auto-derived key of a task name and serialized payload. */
    public static String autoKey(String taskName, byte[] payload) {
        ensureLoaded();
        return nativeAutoKey(taskName, payload);
    }

    /**
     * Panics inside native code with {@code message}. Exists so that tests can prove the panic
     * barrier: the call must end in a {@code FlexiQException}, never in a crashed JVM.
     */
    public static void panicForTest(String message) {
        ensureLoaded();
        nativePanicForTest(message);
    }

    /** Connects a client; returns its handle. */
    public static long connect(String url, String schema, int poolSize, long connectTimeoutMillis,
            long acquireTimeoutMillis, boolean migrate) {
        ensureLoaded();
        return nativeConnect(url, schema, poolSize, connectTimeoutMillis, acquireTimeoutMillis, migrate);
    }

    /** Forgets a client handle; its connections close once running calls return. */
    public static void close(long client) {
        ensureLoaded();
        nativeClose(client);
    }

    /** Applies missing migrations; returns how many ran. */
    public static int migrate(long client) {
        ensureLoaded();
        return nativeMigrate(client);
    }

    /**
     * Enqueues a batch given column by column; returns the job ids followed by the outcomes
     * (0 accepted, 1 replayed). {@code Long.MIN_VALUE} marks an unset optional long.
     */
    public static long[] enqueue(long client, String[] tasks, byte[][] payloads, String[] resolvedKeys,
            String[] scopes, String[] queues, int[] priorities, long[] runAtMicros, long[] delayMillis,
            int[] maxAttempts, long[] retryInitialMillis, long[] retryMaxMillis, double[] retryMultipliers,
            double[] retryJitters, long[] timeoutMillis, String[] nulSeparatedTags, long[] keyRetentionMillis) {
        ensureLoaded();
        return nativeEnqueue(client, tasks, payloads, resolvedKeys, scopes, queues, priorities, runAtMicros,
                delayMillis, maxAttempts, retryInitialMillis, retryMaxMillis, retryMultipliers, retryJitters,
                timeoutMillis, nulSeparatedTags, keyRetentionMillis);
    }

    /** The job as JSON, or null. */
    public static String getJob(long client, long jobId) {
        ensureLoaded();
        return nativeGetJob(client, jobId);
    }

    /** {@link #jobAction}: cancel a pending job. */
    public static final int JOB_CANCEL = 0;
    /** {@link #jobAction}: delete a job that is not running. */
    public static final int JOB_PURGE = 1;
    /** {@link #jobAction}: complete a pending or running job without running it. */
    public static final int JOB_MARK_COMPLETED = 2;

    /** Applies one of the {@code JOB_*} changes; false if the job's state does not allow it. */
    public static boolean jobAction(long client, long jobId, int action) {
        ensureLoaded();
        return nativeJobAction(client, jobId, action);
    }

    /** {@link #grant}: what a producer needs to enqueue and read jobs. */
    public static final int GRANT_PRODUCER = 0;
    /** {@link #grant}: what a worker needs to run jobs. */
    public static final int GRANT_WORKER = 1;

    /** Grants {@code role} one of the {@code GRANT_*} privilege sets on the client's schema. */
    public static void grant(long client, String role, int grant) {
        ensureLoaded();
        nativeGrant(client, role, grant);
    }

    /** Deletes expired key bindings; returns how many. */
    public static long expireKeys(long client) {
        ensureLoaded();
        return nativeExpireKeys(client);
    }

    /**
     * Claims up to {@code limit} (at most {@code ids.length}) due jobs of these queues and tasks
     * under a lease, marked with {@code token}, into the output arrays (queue and task as indexes
     * into the arrays passed; timeout {@code Long.MIN_VALUE} when none); returns how many.
     */
    public static int claim(long client, String[] queues, String[] tasks, int limit, long leaseMillis, long token,
            long[] ids, int[] attempts, int[] maxAttempts, long[] timeoutMillis, int[] queueIndexes,
            int[] taskIndexes, byte[][] payloads) {
        ensureLoaded();
        return nativeClaim(client, queues, tasks, limit, leaseMillis, token, ids, attempts, maxAttempts,
                timeoutMillis, queueIndexes, taskIndexes, payloads);
    }

    /**
     * The jobs the claim marked {@code token} took and that still run that attempt, their leases
     * renewed, into the output arrays as {@link #claim} writes them; returns how many.
     */
    public static int recoverClaim(long client, String[] queues, String[] tasks, long leaseMillis, long token,
            long[] ids, int[] attempts, int[] maxAttempts, long[] timeoutMillis, int[] queueIndexes,
            int[] taskIndexes, byte[][] payloads) {
        ensureLoaded();
        return nativeRecoverClaim(client, queues, tasks, leaseMillis, token, ids, attempts, maxAttempts,
                timeoutMillis, queueIndexes, taskIndexes, payloads);
    }

    /** Completes the attempts' jobs; returns the ids whose attempt still held the job. */
    public static long[] complete(long client, long[] ids, int[] attempts) {
        ensureLoaded();
        return nativeComplete(client, ids, attempts);
    }

    /** Extends the attempts' leases; returns the ids whose attempt still holds the job. */
    public static long[] extendLeases(long client, long[] ids, int[] attempts, long leaseMillis) {
        ensureLoaded();
        return nativeExtendLeases(client, ids, attempts, leaseMillis);
    }

    /**
     * Records a failed attempt: returns the retry's due time in microseconds since the epoch, 0
     * when the job was dead-lettered, -1 when the attempt no longer held the job.
     */
    public static long fail(long client, long id, int attempt, String error) {
        ensureLoaded();
        return nativeFail(client, id, attempt, error);
    }

    /** Puts back to work the running jobs whose lease has passed; returns how many. */
    public static long rescueExpired(long client) {
        ensureLoaded();
        return nativeRescueExpired(client);
    }

    /** Gives back unfinished attempts; their jobs are due again and the attempts do not count. */
    public static long returnAttempts(long client, long[] ids, int[] attempts) {
        ensureLoaded();
        return nativeReturnAttempts(client, ids, attempts);
    }

    /** Stores a checkpoint while the attempt holds its job; false when it no longer does. */
    public static boolean saveCheckpoint(long client, long id, int attempt, String name, byte[] value) {
        ensureLoaded();
        return nativeSaveCheckpoint(client, id, attempt, name, value);
    }

    /** A job's checkpoint, or null. */
    public static byte[] checkpoint(long client, long id, String name) {
        ensureLoaded();
        return nativeCheckpoint(client, id, name);
    }

    /**
     * Redrives a dead job; returns the outcome (the ordinal of {@code io.flexiq.RedriveOutcome})
     * and the key's holder (or 0).
     */
    public static long[] redrive(long client, long id, String redriveKey) {
        ensureLoaded();
        return nativeRedrive(client, id, redriveKey);
    }

    /** The client's wake-up generation; starts its listener on first use. */
    public static long workGeneration(long client) {
        ensureLoaded();
        return nativeWorkGeneration(client);
    }

    /** Waits until the wake-up generation moves past {@code seen}, or the timeout; returns it. */
    public static long awaitWork(long client, long seen, long timeoutMillis) {
        ensureLoaded();
        return nativeAwaitWork(client, seen, timeoutMillis);
    }

    /** Wakes the client's waiting workers. */
    public static void wakeWorkers(long client) {
        ensureLoaded();
        nativeWakeWorkers(client);
    }

    private static native void nativePanicForTest(String message);

    private static native long nativeConnect(String url, String schema, int poolSize, long connectTimeoutMillis,
            long acquireTimeoutMillis, boolean migrate);

    private static native void nativeClose(long client);

    private static native int nativeMigrate(long client);

    private static native long[] nativeEnqueue(long client, String[] tasks, byte[][] payloads,
            String[] resolvedKeys, String[] scopes, String[] queues, int[] priorities, long[] runAtMicros,
            long[] delayMillis, int[] maxAttempts, long[] retryInitialMillis, long[] retryMaxMillis,
            double[] retryMultipliers, double[] retryJitters, long[] timeoutMillis, String[] nulSeparatedTags,
            long[] keyRetentionMillis);

    private static native String nativeGetJob(long client, long jobId);

    private static native boolean nativeJobAction(long client, long jobId, int action);

    private static native void nativeGrant(long client, String role, int grant);

    private static native long nativeExpireKeys(long client);

    private static native int nativeClaim(long client, String[] queues, String[] tasks, int limit, long leaseMillis,
            long token, long[] ids, int[] attempts, int[] maxAttempts, long[] timeoutMillis, int[] queueIndexes,
            int[] taskIndexes, byte[][] payloads);

    private static native int nativeRecoverClaim(long client, String[] queues, String[] tasks, long leaseMillis,
            long token, long[] ids, int[] attempts, int[] maxAttempts, long[] timeoutMillis, int[] queueIndexes,
            int[] taskIndexes, byte[][] payloads);

    private static native long[] nativeComplete(long client, long[] ids, int[] attempts);

    private static native long[] nativeExtendLeases(long client, long[] ids, int[] attempts, long leaseMillis);

    private static native long nativeFail(long client, long id, int attempt, String error);

    private static native long nativeRescueExpired(long client);

    private static native long nativeReturnAttempts(long client, long[] ids, int[] attempts);

    private static native boolean nativeSaveCheckpoint(long client, long id, int attempt, String name,
            byte[] value);

    private static native byte[] nativeCheckpoint(long client, long id, String name);

    private static native long[] nativeRedrive(long client, long id, String redriveKey);

    private static native long nativeWorkGeneration(long client);

    private static native long nativeAwaitWork(long client, long seen, long timeoutMillis);

    private static native void nativeWakeWorkers(long client);

    private static native byte[] nativeCanonicalJson(byte[] json);

    private static native String nativeAutoKey(String taskName, byte[] payload);
}
