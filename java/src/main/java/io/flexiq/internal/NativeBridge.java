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
    public static long connect(String url, String schema, int poolSize, long connectTimeoutMillis, boolean migrate) {
        ensureLoaded();
        return nativeConnect(url, schema, poolSize, connectTimeoutMillis, migrate);
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

    /** Deletes expired key bindings; returns how many. */
    public static long expireKeys(long client) {
        ensureLoaded();
        return nativeExpireKeys(client);
    }

    /** Starts a private PostgreSQL; returns its handle. */
    public static long startLocalPostgres(boolean durable) {
        ensureLoaded();
        return nativeStartLocalPostgres(durable);
    }

    /** The private PostgreSQL's URL. */
    public static String localPostgresUrl(long server) {
        ensureLoaded();
        return nativeLocalPostgresUrl(server);
    }

    /** Stops the private PostgreSQL and deletes its files. */
    public static void stopLocalPostgres(long server) {
        ensureLoaded();
        nativeStopLocalPostgres(server);
    }

    private static native void nativePanicForTest(String message);

    private static native long nativeConnect(String url, String schema, int poolSize, long connectTimeoutMillis,
            boolean migrate);

    private static native void nativeClose(long client);

    private static native int nativeMigrate(long client);

    private static native long[] nativeEnqueue(long client, String[] tasks, byte[][] payloads,
            String[] resolvedKeys, String[] scopes, String[] queues, int[] priorities, long[] runAtMicros,
            long[] delayMillis, int[] maxAttempts, long[] retryInitialMillis, long[] retryMaxMillis,
            double[] retryMultipliers, double[] retryJitters, long[] timeoutMillis, String[] nulSeparatedTags,
            long[] keyRetentionMillis);

    private static native String nativeGetJob(long client, long jobId);

    private static native boolean nativeJobAction(long client, long jobId, int action);

    private static native long nativeExpireKeys(long client);

    private static native long nativeStartLocalPostgres(boolean durable);

    private static native String nativeLocalPostgresUrl(long server);

    private static native void nativeStopLocalPostgres(long server);

    private static native byte[] nativeCanonicalJson(byte[] json);

    private static native String nativeAutoKey(String taskName, byte[] payload);
}
