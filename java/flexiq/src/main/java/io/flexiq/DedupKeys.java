package io.flexiq;

import io.flexiq.internal.Limits;
import io.flexiq.internal.NativeBridge;
import io.flexiq.internal.enqueue.KeyRules;
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
        String explicit = KeyRules.explicitOrNull(options);
        if (explicit != null) {
            return explicit;
        }
        // Task names are checked when the Task is made; no need to check again per enqueue.
        return KeyRules.derives(task, options) ? NativeBridge.autoKey(task.name(), serializedPayload) : null;
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
