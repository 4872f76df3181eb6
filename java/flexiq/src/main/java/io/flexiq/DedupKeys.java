package io.flexiq;

import io.flexiq.internal.Limits;
import io.flexiq.internal.NativeBridge;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The dedup key of an enqueue, resolved in Java before anything reaches native code.
 *
 * <p>Precedence, first match wins: {@code uniqueKey}, then {@code idempotencyKey}, then the
 * auto-derived key when the call says {@code idempotent(true)} or the task is idempotent and the
 * call does not say {@code idempotent(false)}; otherwise no key.
 *
 * <p>The kind of key decides how long its binding lasts (see
 * {@link EnqueueOptions.Builder#keyRetention}).
 *
 * <p>The auto-derived key is {@code "auto:"} followed by the first 32 lowercase hex characters
 * of {@code sha256(utf8(taskName) || 0x00 || payload)}, computed by the native core so that
 * every binding shares one implementation.
 */
public final class DedupKeys {
    private DedupKeys() {}

    /**
     * Resolves the key an enqueue of {@code task} with {@code options} would use.
     *
     * @param serializedPayload the payload as the task's serializer emitted it, before any codec
     * @throws IllegalArgumentException if the task or the serialized payload is null
     * @throws NullPointerException if the options are null
     */
    public static Optional<String> resolve(Task<?> task, EnqueueOptions options, byte[] serializedPayload) {
        Task.require(task);
        Objects.requireNonNull(options, "options");
        if (serializedPayload == null) {
            throw new IllegalArgumentException("payload must not be null");
        }
        return Optional.ofNullable(resolveOrNull(task, options, serializedPayload));
    }

    static String resolveOrNull(Task<?> task, EnqueueOptions options, byte[] serializedPayload) {
        String explicit = explicitOrNull(options);
        if (explicit != null) {
            return explicit;
        }
        // Task names are checked when the Task is made; no need to check again per enqueue.
        return derives(task, options) ? NativeBridge.autoKey(task.name(), serializedPayload) : null;
    }

    /** The key the options name ({@code uniqueKey}, then {@code idempotencyKey}), or null. */
    static String explicitOrNull(EnqueueOptions options) {
        return options.uniqueKey().orElseGet(() -> options.idempotencyKey().orElse(null));
    }

    /** Whether, absent a key the options name, the key is derived from the payload. */
    static boolean derives(Task<?> task, EnqueueOptions options) {
        return options.idempotent().orElse(task.isIdempotent());
    }

    /**
     * How long past acceptance the key stays bound even once its job has finished, by the kind of
     * key the precedence picked; null when it frees as the job finishes, or there is no key.
     * Computed once here, so that the binding and the fingerprint a replay is compared on agree.
     *
     * @param derive whether the key is derived (no explicit key, and {@link #derives})
     * @param explicitDefault the client's retention for explicit keys, or null
     */
    static Duration retentionOrNull(EnqueueOptions options, boolean derive, Duration explicitDefault) {
        boolean unique = options.uniqueKey().isPresent();
        boolean idempotency = !unique && options.idempotencyKey().isPresent();
        if (!unique && !idempotency && !derive) {
            return null;
        }
        if (options.debounce().isPresent() || options.throttle().isPresent()) {
            // Their keys free by their own rule (see EnqueueOptions.Builder#debounce, #throttle).
            return null;
        }
        Optional<Duration> asked = options.keyRetention();
        if (asked.isPresent()) {
            return asked.get();
        }
        if (idempotency) {
            return explicitDefault != null ? explicitDefault : EnqueueOptions.DEFAULT_IDEMPOTENCY_KEY_RETENTION;
        }
        return unique ? explicitDefault : null;
    }

    /**
     * The auto-derived key of a task name and serialized payload.
     *
     * @throws IllegalArgumentException if the task name is invalid (see {@link Task#of})
     */
    public static String autoKey(String taskName, byte[] serializedPayload) {
        Limits.taskName(taskName);
        if (serializedPayload == null) {
            throw new IllegalArgumentException("payload must not be null");
        }
        return NativeBridge.autoKey(taskName, serializedPayload);
    }
}
