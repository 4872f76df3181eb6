package io.flexiq.internal;

import io.flexiq.CanonicalJsonSerializer;
import io.flexiq.EnqueueEvent;
import io.flexiq.EnqueueOutcome;
import io.flexiq.EnqueueResult;
import io.flexiq.FlexiQ;
import io.flexiq.JobContext;
import io.flexiq.JobEvent;
import io.flexiq.JobInfo;
import io.flexiq.JobState;
import io.flexiq.NonReplaceableReason;
import io.flexiq.PayloadSerializer;
import io.flexiq.internal.observability.Listeners;
import io.flexiq.internal.worker.AttemptStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * What the engine may use of {@code io.flexiq}'s types that they keep package-private: the
 * constructors of the values and events the engine hands to applications, and the little state
 * it needs from them. Each method does exactly what the member it stands for does, nothing more.
 *
 * <p>{@code io.flexiq.ApiAccessImpl}, package-private, implements it and registers itself when
 * its class is initialized; {@link #get()} initializes it. A class of the engine keeps it in a
 * constant, so that the JIT compiles each call as a direct call to the member:
 *
 * <pre>{@code
 * private static final ApiAccess API = ApiAccess.get();
 * }</pre>
 */
public abstract class ApiAccess {
    /** The one implementation, in {@code io.flexiq}. */
    private static final String IMPLEMENTATION = "io.flexiq.ApiAccessImpl";
    private static volatile ApiAccess registered;

    protected ApiAccess() {}

    /** The implementation, registered by {@code io.flexiq} (initialized here if it was not yet). */
    public static ApiAccess get() {
        ApiAccess access = registered;
        if (access == null) {
            try {
                // Its static initializer registers it.
                Class.forName(IMPLEMENTATION, true, ApiAccess.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(IMPLEMENTATION + " is missing from FlexiQ's jar", e);
            }
            access = registered;
        }
        return access;
    }

    /**
     * Registers {@code io.flexiq}'s implementation; called once, by its static initializer.
     *
     * @throws IllegalStateException if called again, or with another class
     */
    public static synchronized void register(ApiAccess access) {
        Class<?> type = access.getClass();
        if (registered != null || !type.getName().equals(IMPLEMENTATION)
                || type.getClassLoader() != ApiAccess.class.getClassLoader()) {
            throw new IllegalStateException("only " + IMPLEMENTATION + " registers, once");
        }
        registered = access;
    }

    /** {@code new EnqueueResult(jobId, outcome, reason)}. */
    public abstract EnqueueResult enqueueResult(String jobId, EnqueueOutcome outcome, NonReplaceableReason reason);

    /** {@code new EnqueueEvent(task, queue, outcome, jobId, keyPreview, keyDigest, at)}. */
    public abstract EnqueueEvent enqueueEvent(String task, String queue, EnqueueOutcome outcome, String jobId,
            String keyPreview, String keyDigest, Instant at);

    /**
     * {@code new JobEvent(kind, jobId, task, queue, attempt, maxAttempts, error, retryDelay,
     * handlerDuration, startLatency)}, which happens now.
     */
    public abstract JobEvent jobEvent(JobEvent.Kind kind, String jobId, String task, String queue, int attempt,
            int maxAttempts, String error, Duration retryDelay, Duration handlerDuration, Duration startLatency);

    /** {@code new JobContext(store, serializer, jobId, attempt, maxAttempts, queue, task)}. */
    public abstract JobContext jobContext(AttemptStore store, PayloadSerializer serializer, long jobId,
            int attempt, int maxAttempts, String queue, String task);

    /**
     * {@code new JobInfo(id, queue, task, state, priority, attempt, maxAttempts, tags, runAt,
     * createdAt, startedAt, finishedAt, keyScope, keyPreview, keyDigest, keyHeld, lastError,
     * payloadCodec)}.
     */
    public abstract JobInfo jobInfo(String id, String queue, String task, JobState state, int priority, int attempt,
            int maxAttempts, List<String> tags, Instant runAt, Instant createdAt, Instant startedAt,
            Instant finishedAt, String keyScope, String keyPreview, String keyDigest, boolean keyHeld,
            String lastError, String payloadCodec);

    /** {@code serializer.jsonForNativeCanonicalForm(payload)}. */
    public abstract byte[] jsonForNativeCanonicalForm(CanonicalJsonSerializer serializer, Object payload);

    /** The client's listeners and tracing. */
    public abstract Listeners listeners(FlexiQ client);
}
