package io.flexiq;

import io.flexiq.internal.Durations;
import io.flexiq.internal.Limits;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Collections;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * How one job is enqueued: its dedup key inputs and its ordinary job options. Built by
 * {@link #builder()}; immutable; one instance may serve any number of calls.
 *
 * <p>The dedup key is resolved in Java before the call reaches native code, first match wins:
 * {@link Builder#uniqueKey uniqueKey} (alias {@link Builder#jobId jobId}), then
 * {@link Builder#idempotencyKey idempotencyKey}, then a key derived from the task name and
 * payload when {@link Builder#idempotent idempotent(true)} is set on the call, or when the task
 * is idempotent and the call does not say {@code idempotent(false)}; otherwise the job has no key.
 *
 * <p>How long a key stays bound depends on its kind: an {@code idempotencyKey} for 24 hours
 * from acceptance ({@link #DEFAULT_IDEMPOTENCY_KEY_RETENTION}), so that a repeat after a fast
 * worker finished the job still returns it; a {@code uniqueKey} and a derived key while the job
 * is pending or running. {@link Builder#keyRetention keyRetention} on the call, or the
 * client's {@link FlexiQ.Builder#keyRetention default} for explicit keys, overrides this.
 *
 * <p>Options left unset stay unset: an omitted {@code runAt} means "as soon as possible" and is
 * not part of what a replay is compared with.
 */
public final class EnqueueOptions {
    /** The scope keys live in unless a call names another. */
    public static final String DEFAULT_SCOPE = "default";
    /** The queue jobs go to unless a call names another. */
    public static final String DEFAULT_QUEUE = "default";
    /** The attempt budget of a job unless a call sets another. */
    public static final int DEFAULT_MAX_ATTEMPTS = 20;
    /**
     * How long an {@code idempotencyKey} stays bound from acceptance, 24 hours, unless the call or
     * the client sets a retention.
     */
    public static final Duration DEFAULT_IDEMPOTENCY_KEY_RETENTION = Duration.ofHours(24);

    private static final EnqueueOptions DEFAULTS = new Builder().build();

    private final String uniqueKey;
    private final String idempotencyKey;
    private final Boolean idempotent;
    private final String queue;
    private final int priority;
    private final Instant runAt;
    private final Duration delay;
    private final int maxAttempts;
    private final RetryPolicy retryPolicy;
    private final SortedSet<String> tags;
    private final Duration timeout;
    private final String scope;
    private final Duration keyRetention;
    private final Instant deadline;
    private final String concurrencyKey;
    private final int concurrencyLimit;
    private final Duration debounce;
    private final Duration maxWait;
    private final Duration throttle;

    private EnqueueOptions(Builder b) {
        this.uniqueKey = b.uniqueKey;
        this.idempotencyKey = b.idempotencyKey;
        this.idempotent = b.idempotent;
        this.queue = b.queue;
        this.priority = b.priority;
        this.runAt = b.runAt;
        this.delay = b.delay;
        this.maxAttempts = b.maxAttempts;
        this.retryPolicy = b.retryPolicy;
        this.tags = Collections.unmodifiableSortedSet(new TreeSet<>(b.tags));
        this.timeout = b.timeout;
        this.scope = b.scope;
        this.keyRetention = b.keyRetention;
        this.deadline = b.deadline;
        this.concurrencyKey = b.concurrencyKey;
        this.concurrencyLimit = b.concurrencyLimit;
        this.debounce = b.debounce;
        this.maxWait = b.maxWait;
        this.throttle = b.throttle;
    }

    /** Options with nothing set: default queue and scope, no key unless the task derives one. */
    public static EnqueueOptions defaults() {
        return DEFAULTS;
    }

    /** Starts a builder with nothing set. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder that starts from these options. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.uniqueKey = uniqueKey;
        b.idempotencyKey = idempotencyKey;
        b.idempotent = idempotent;
        b.queue = queue;
        b.priority = priority;
        b.runAt = runAt;
        b.delay = delay;
        b.maxAttempts = maxAttempts;
        b.retryPolicy = retryPolicy;
        b.tags.addAll(tags);
        b.timeout = timeout;
        b.scope = scope;
        b.keyRetention = keyRetention;
        b.deadline = deadline;
        b.concurrencyKey = concurrencyKey;
        b.concurrencyLimit = concurrencyLimit;
        b.debounce = debounce;
        b.maxWait = maxWait;
        b.throttle = throttle;
        return b;
    }

    /** The literal storage key, if set. */
    public Optional<String> uniqueKey() {
        return Optional.ofNullable(uniqueKey);
    }

    /** The idempotency key, if set. */
    public Optional<String> idempotencyKey() {
        return Optional.ofNullable(idempotencyKey);
    }

    /** The per-call auto-derivation override, if set. */
    public Optional<Boolean> idempotent() {
        return Optional.ofNullable(idempotent);
    }

    /** The queue the job goes to. */
    public String queue() {
        return queue;
    }

    /** The job's priority: higher runs first among jobs that are due. */
    public int priority() {
        return priority;
    }

    /** The explicit time the job becomes due, if set. */
    public Optional<Instant> runAt() {
        return Optional.ofNullable(runAt);
    }

    /** The requested delay from acceptance until the job is due, if set. */
    public Optional<Duration> delay() {
        return Optional.ofNullable(delay);
    }

    /** How many attempts the job gets before it is dead-lettered. */
    public int maxAttempts() {
        return maxAttempts;
    }

    /** How long the job waits between failed attempts. */
    public RetryPolicy retryPolicy() {
        return retryPolicy;
    }

    /** The job's tags, sorted. */
    public SortedSet<String> tags() {
        return tags;
    }

    /** How long one attempt may run before it counts as failed, if set. */
    public Optional<Duration> timeout() {
        return Optional.ofNullable(timeout);
    }

    /** The scope the dedup key lives in. */
    public String scope() {
        return scope;
    }

    /**
     * The retention set on this call, if any: how long the key stays bound after acceptance even
     * once its job has finished. Unset, the key's kind decides (see {@link Builder#keyRetention}).
     */
    public Optional<Duration> keyRetention() {
        return Optional.ofNullable(keyRetention);
    }

    /** The time after which the job, if no attempt has started, is dead-lettered instead of run. */
    public Optional<Instant> deadline() {
        return Optional.ofNullable(deadline);
    }

    /** The job's concurrency key, if set (see {@link Builder#concurrencyKey}). */
    public Optional<String> concurrencyKey() {
        return Optional.ofNullable(concurrencyKey);
    }

    /** How many jobs of the {@link #concurrencyKey} may run at once for this job to start; 0 without a key. */
    public int concurrencyLimit() {
        return concurrencyLimit;
    }

    /** The debounce period, if set: the job is due this long after the latest request for its key. */
    public Optional<Duration> debounce() {
        return Optional.ofNullable(debounce);
    }

    /** The longest a debounced burst may postpone its job, from first acceptance, if set. */
    public Optional<Duration> maxWait() {
        return Optional.ofNullable(maxWait);
    }

    /** The throttle window, if set: at most one job per key per window, counted from acceptance. */
    public Optional<Duration> throttle() {
        return Optional.ofNullable(throttle);
    }

    /** Builds {@link EnqueueOptions}. Every setter checks its argument at once. */
    public static final class Builder {
        private String uniqueKey;
        private String idempotencyKey;
        private Boolean idempotent;
        private String queue = DEFAULT_QUEUE;
        private int priority;
        private Instant runAt;
        private Duration delay;
        private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
        private RetryPolicy retryPolicy = RetryPolicy.DEFAULT;
        private final TreeSet<String> tags = new TreeSet<>();
        private Duration timeout;
        private String scope = DEFAULT_SCOPE;
        private Duration keyRetention;
        private Instant deadline;
        private String concurrencyKey;
        private int concurrencyLimit;
        private Duration debounce;
        private Duration maxWait;
        private Duration throttle;

        private Builder() {}

        /**
         * The literal dedup key; wins over every other key input. Its binding lasts while the job
         * is pending or running and frees when the job finishes (completes, is dead-lettered or
         * cancelled), unless {@link #keyRetention} or the client's
         * {@link FlexiQ.Builder#keyRetention default} keeps it longer. When an
         * {@link #idempotencyKey} is set too, this key and its rule apply.
         *
         * @throws IllegalArgumentException if empty, over 512 bytes of UTF-8, containing NUL or not
         *     valid UTF-16 (an unpaired surrogate)
         */
        public Builder uniqueKey(String key) {
            this.uniqueKey = Limits.key(key);
            return this;
        }

        /** Alias of {@link #uniqueKey(String)}. */
        public Builder jobId(String key) {
            return uniqueKey(key);
        }

        /**
         * A dedup key, used when no {@link #uniqueKey(String)} is set. Its binding lasts
         * 24 hours from acceptance ({@link EnqueueOptions#DEFAULT_IDEMPOTENCY_KEY_RETENTION}),
         * even after the job has finished, so that a double click or a webhook redelivered after a
         * fast worker completed the job gets the original job back ({@link EnqueueOutcome#REPLAYED}).
         * {@link #keyRetention} on the call, or the client's
         * {@link FlexiQ.Builder#keyRetention default}, replaces the 24 hours.
         *
         * @throws IllegalArgumentException if empty, over 512 bytes of UTF-8, containing NUL or not
         *     valid UTF-16 (an unpaired surrogate)
         */
        public Builder idempotencyKey(String key) {
            this.idempotencyKey = Limits.key(key);
            return this;
        }

        /**
         * Forces key derivation from the task name and payload on ({@code true}) or off
         * ({@code false}) for this call, overriding the task's default. An explicit key still wins.
         */
        public Builder idempotent(boolean idempotent) {
            this.idempotent = idempotent;
            return this;
        }

        /**
         * The queue the job goes to (default {@value EnqueueOptions#DEFAULT_QUEUE}).
         *
         * @throws IllegalArgumentException if empty, over 128 bytes of UTF-8, containing NUL or not
         *     valid UTF-16
         */
        public Builder queue(String queue) {
            this.queue = Limits.name("queue", queue);
            return this;
        }

        /** Higher runs first among due jobs (default 0). */
        public Builder priority(int priority) {
            this.priority = priority;
            return this;
        }

        /**
         * An explicit time at which the job becomes due; replaces any {@link #delay}. Stored to the
         * microsecond (finer parts are dropped).
         *
         * @throws IllegalArgumentException unless between 0001-01-01T00:00:00Z and
         *     9999-12-31T23:59:59.999999Z
         */
        public Builder runAt(Instant runAt) {
            this.runAt = Durations.instant("runAt", runAt);
            this.delay = null;
            return this;
        }

        /**
         * A delay from acceptance until the job is due; replaces any {@link #runAt}. Counted in
         * whole milliseconds.
         *
         * @throws IllegalArgumentException unless between 0 and 36500 days
         */
        public Builder delay(Duration delay) {
            this.delay = Durations.stored("delay", delay);
            this.runAt = null;
            return this;
        }

        /** The attempt budget, at least 1 (default {@value EnqueueOptions#DEFAULT_MAX_ATTEMPTS}). */
        public Builder maxAttempts(int maxAttempts) {
            if (maxAttempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
            return this;
        }

        /** The wait between failed attempts (default {@link RetryPolicy#DEFAULT}). */
        public Builder retryPolicy(RetryPolicy retryPolicy) {
            if (retryPolicy == null) {
                throw new IllegalArgumentException("retryPolicy must not be null");
            }
            this.retryPolicy = retryPolicy;
            return this;
        }

        /**
         * Adds tags; their order does not matter.
         *
         * @throws IllegalArgumentException if a tag is empty, over 128 bytes of UTF-8, contains NUL
         *     or is not valid UTF-16
         */
        public Builder tags(Collection<String> tags) {
            if (tags == null) {
                throw new IllegalArgumentException("tags must not be null");
            }
            for (String tag : tags) {
                this.tags.add(Limits.name("tag", tag));
            }
            return this;
        }

        /**
         * Adds tags; their order does not matter.
         *
         * @throws IllegalArgumentException if a tag is empty, over 128 bytes of UTF-8, contains NUL
         *     or is not valid UTF-16
         */
        public Builder tags(String... tags) {
            if (tags == null) {
                throw new IllegalArgumentException("tags must not be null");
            }
            return tags(java.util.Arrays.asList(tags));
        }

        /**
         * How long one attempt may run before it counts as failed. Counted in whole milliseconds.
         *
         * @throws IllegalArgumentException unless between 1 ms and 36500 days
         */
        public Builder timeout(Duration timeout) {
            this.timeout = Durations.storedPositive("timeout", timeout);
            return this;
        }

        /**
         * The scope the key lives in (default {@value EnqueueOptions#DEFAULT_SCOPE}).
         *
         * @throws IllegalArgumentException if empty, over 128 bytes of UTF-8, containing NUL or not
         *     valid UTF-16
         */
        public Builder scope(String scope) {
            this.scope = Limits.name("scope", scope);
            return this;
        }

        /**
         * Keeps the key bound until acceptance plus {@code retention}, even after the job has
         * finished, so that a replay in that window returns the finished job's id; while the job is
         * pending or running the key is bound in any case. Counted in whole milliseconds.
         *
         * <p>Overrides the default of every kind of key. Unset, the binding lasts:
         * <ul>
         *   <li>{@link #idempotencyKey}: 24 hours from acceptance
         *       ({@link EnqueueOptions#DEFAULT_IDEMPOTENCY_KEY_RETENTION}), or the client's
         *       {@link FlexiQ.Builder#keyRetention default};</li>
         *   <li>{@link #uniqueKey} / {@link #jobId}: until the job finishes, or the client's
         *       default;</li>
         *   <li>a derived key ({@link #idempotent}): until the job finishes.</li>
         * </ul>
         * {@code Duration.ZERO} frees any key when its job finishes. A job without a key keeps no
         * retention. The retention is part of what a replay is compared with: the same key sent
         * with another effective retention (an {@code idempotencyKey} then a {@code uniqueKey},
         * say) is an {@link IdempotencyConflictException} naming {@code keyRetention}.
         *
         * @throws IllegalArgumentException unless between 0 and 36500 days
         */
        public Builder keyRetention(Duration retention) {
            this.keyRetention = Durations.stored("keyRetention", retention);
            return this;
        }

        /**
         * A deadline for the job's start: once it passes, no attempt starts (neither the first nor
         * a retry); the job is dead-lettered with a reason that says so, and its key is released as
         * for any dead job. An attempt already running is not stopped (that is {@link #timeout}).
         * Stored to the microsecond.
         *
         * @throws IllegalArgumentException unless between 0001-01-01T00:00:00Z and
         *     9999-12-31T23:59:59.999999Z
         */
        public Builder deadline(Instant deadline) {
            this.deadline = Durations.instant("deadline", deadline);
            return this;
        }

        /**
         * A concurrency key and its limit: the job starts only while fewer than {@code limit} jobs
         * with this key run, counted across every worker process. Jobs held back by their key do
         * not hold back the jobs behind them. The limit is carried by each job, so jobs of one key
         * should name the same limit (a job starts only while the running ones number fewer than
         * its own). Part of what a replay is compared on.
         *
         * @throws IllegalArgumentException if the key is empty, over 128 bytes of UTF-8, contains
         *     NUL or is not valid UTF-16, or the limit is below 1
         */
        public Builder concurrencyKey(String key, int limit) {
            String checked = Limits.name("concurrencyKey", key);
            if (limit < 1) {
                throw new IllegalArgumentException("the limit of concurrency key " + key + " must be at least 1, got "
                        + limit);
            }
            this.concurrencyKey = checked;
            this.concurrencyLimit = limit;
            return this;
        }

        /**
         * Debounce: collapse a burst of requests for this call's key into one run with the latest
         * payload. The first request is {@link EnqueueOutcome#ACCEPTED}, due {@code period} later;
         * a repeat while that job is still pending is {@link EnqueueOutcome#REPLACED}: the job
         * takes the repeat's payload and options and is due {@code period} after it (never past
         * {@link #maxWait} from the first acceptance). A repeat that cannot replace is
         * {@link EnqueueOutcome#NON_REPLACEABLE} with a {@link NonReplaceableReason}, and writes
         * nothing. The key frees when the job finishes. Needs a key; excludes {@link #throttle},
         * {@link #runAt}, {@link #delay} and {@link #keyRetention}. Counted in whole milliseconds.
         *
         * @throws IllegalArgumentException unless between 1 ms and 36500 days
         */
        public Builder debounce(Duration period) {
            this.debounce = Durations.storedPositive("debounce", period);
            return this;
        }

        /**
         * With {@link #debounce}: the longest a burst may postpone the job, counted from its first
         * acceptance (Inngest's debounce timeout, Trigger.dev's maxDelay). Past it, the job is due
         * and repeats are {@link NonReplaceableReason#WINDOW_ELAPSED}.
         *
         * @throws IllegalArgumentException unless between 1 ms and 36500 days
         */
        public Builder maxWait(Duration maxWait) {
            this.maxWait = Durations.storedPositive("maxWait", maxWait);
            return this;
        }

        /**
         * Throttle: at most one job per key per {@code window}, the window counted from the
         * accepted job's acceptance. The first request is {@link EnqueueOutcome#ACCEPTED}; repeats
         * inside the window are {@link EnqueueOutcome#COALESCED} onto that job (whatever their
         * payload, and even after the job has finished); the first request after the window makes a
         * new job. Needs a key; excludes {@link #debounce} and {@link #keyRetention} (the window is
         * the key's retention). Counted in whole milliseconds.
         *
         * @throws IllegalArgumentException unless between 1 ms and 36500 days
         */
        public Builder throttle(Duration window) {
            this.throttle = Durations.storedPositive("throttle", window);
            return this;
        }

        /**
         * The immutable options.
         *
         * @throws IllegalArgumentException if options exclude each other: {@link #debounce} with
         *     {@link #throttle}, {@link #runAt}, {@link #delay} or {@link #keyRetention};
         *     {@link #throttle} with {@link #keyRetention}; {@link #maxWait} without
         *     {@link #debounce}
         */
        public EnqueueOptions build() {
            if (debounce != null && throttle != null) {
                throw new IllegalArgumentException("debounce and throttle exclude each other; choose one");
            }
            if (maxWait != null && debounce == null) {
                throw new IllegalArgumentException("maxWait bounds a debounce; set debounce too, or drop maxWait");
            }
            if (debounce != null && (runAt != null || delay != null)) {
                throw new IllegalArgumentException(
                        "a debounced job is due when its burst settles; drop runAt and delay, or drop debounce");
            }
            if ((debounce != null || throttle != null) && keyRetention != null) {
                throw new IllegalArgumentException("keyRetention does not apply to debounce or throttle: a debounced"
                        + " key frees when its job finishes, a throttled one when its window closes");
            }
            return new EnqueueOptions(this);
        }
    }
}
