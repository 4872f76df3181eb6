package io.flexiq;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A job as operators see it. It never carries the raw key: only the key's scope, a bounded
 * preview and its SHA-256. Immutable.
 */
public final class JobInfo {
    private final String id;
    private final String queue;
    private final String task;
    private final JobState state;
    private final int priority;
    private final int attempt;
    private final int maxAttempts;
    private final List<String> tags;
    private final Instant runAt;
    private final Instant createdAt;
    private final Instant startedAt;
    private final Instant finishedAt;
    private final String keyScope;
    private final String keyPreview;
    private final String keyDigest;
    private final boolean keyHeld;
    private final String lastError;
    private final String payloadCodec;

    JobInfo(String id, String queue, String task, JobState state, int priority, int attempt, int maxAttempts,
            List<String> tags, Instant runAt, Instant createdAt, Instant startedAt, Instant finishedAt,
            String keyScope, String keyPreview, String keyDigest, boolean keyHeld, String lastError,
            String payloadCodec) {
        this.id = id;
        this.queue = queue;
        this.task = task;
        this.state = state;
        this.priority = priority;
        this.attempt = attempt;
        this.maxAttempts = maxAttempts;
        this.tags = List.copyOf(tags);
        this.runAt = runAt;
        this.createdAt = createdAt;
        this.startedAt = startedAt;
        this.finishedAt = finishedAt;
        this.keyScope = keyScope;
        this.keyPreview = keyPreview;
        this.keyDigest = keyDigest;
        this.keyHeld = keyHeld;
        this.lastError = lastError;
        this.payloadCodec = payloadCodec;
    }

    /** The job's id. */
    public String id() {
        return id;
    }

    /** Its queue. */
    public String queue() {
        return queue;
    }

    /** Its task name. */
    public String task() {
        return task;
    }

    /** Its state. */
    public JobState state() {
        return state;
    }

    /** Its priority: higher runs first. */
    public int priority() {
        return priority;
    }

    /** Attempts started so far. */
    public int attempt() {
        return attempt;
    }

    /** Its attempt budget. */
    public int maxAttempts() {
        return maxAttempts;
    }

    /** Its tags, sorted. */
    public List<String> tags() {
        return tags;
    }

    /** When it is (or was) due. */
    public Instant runAt() {
        return runAt;
    }

    /** When it was accepted. */
    public Instant createdAt() {
        return createdAt;
    }

    /** When its latest attempt started, if any did. */
    public Optional<Instant> startedAt() {
        return Optional.ofNullable(startedAt);
    }

    /** When it left the active states, if it has. */
    public Optional<Instant> finishedAt() {
        return Optional.ofNullable(finishedAt);
    }

    /** The scope of its key, if it was enqueued with one. */
    public Optional<String> keyScope() {
        return Optional.ofNullable(keyScope);
    }

    /** A bounded preview of its key (never the whole key), if it has one. */
    public Optional<String> keyPreview() {
        return Optional.ofNullable(keyPreview);
    }

    /** The SHA-256 of its key in lowercase hex, if it has one. */
    public Optional<String> keyDigest() {
        return Optional.ofNullable(keyDigest);
    }

    /**
     * Whether its key still resolves to it: it is active, or a retention window is open (by
     * default an {@code idempotencyKey}'s, 24 hours from acceptance; see
     * {@link EnqueueOptions.Builder#keyRetention}).
     */
    public boolean keyHeld() {
        return keyHeld;
    }

    /** The error of its latest failed attempt, if any. */
    public Optional<String> lastError() {
        return Optional.ofNullable(lastError);
    }

    /**
     * The id of the {@link PayloadCodec} that encoded the job's stored payload (an encrypted one,
     * for instance); empty when the payload is stored as serialized.
     */
    public Optional<String> payloadCodec() {
        return Optional.ofNullable(payloadCodec);
    }

    @Override
    public String toString() {
        return "JobInfo[" + id + ", " + task + " on " + queue + ", " + state + ", attempt " + attempt + "/"
                + maxAttempts + (keyPreview == null ? "" : ", key " + keyPreview + " (" + keyScope + ")") + "]";
    }
}
