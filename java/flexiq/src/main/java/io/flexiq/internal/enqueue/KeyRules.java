package io.flexiq.internal.enqueue;

import io.flexiq.DedupKeys;
import io.flexiq.EnqueueOptions;
import io.flexiq.Task;
import java.time.Duration;
import java.util.Optional;

/**
 * The rules that pick an enqueue's dedup key and how long its binding lasts, as
 * {@link DedupKeys} describes them: applied by every enqueue before anything reaches native code,
 * and by {@link DedupKeys#resolve}.
 */
public final class KeyRules {
    private KeyRules() {}

    /** The key the options name ({@code uniqueKey}, then {@code idempotencyKey}), or null. */
    public static String explicitOrNull(EnqueueOptions options) {
        return options.uniqueKey().orElseGet(() -> options.idempotencyKey().orElse(null));
    }

    /** Whether, absent a key the options name, the key is derived from the payload. */
    public static boolean derives(Task<?> task, EnqueueOptions options) {
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
    public static Duration retentionOrNull(EnqueueOptions options, boolean derive, Duration explicitDefault) {
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
}
