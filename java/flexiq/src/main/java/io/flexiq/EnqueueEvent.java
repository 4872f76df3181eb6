package io.flexiq;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * How one enqueue entry was decided, for {@link FlexiQListener#onEnqueue}. Immutable. A key
 * appears only as a preview and a SHA-256; a key derived from the payload does not appear (see
 * the job's {@link JobInfo#keyDigest()}).
 */
public final class EnqueueEvent {
    private final String task;
    private final String queue;
    private final EnqueueOutcome outcome;
    private final String jobId;
    private final String keyPreview;
    private final String keyDigest;
    private final Instant at;

    EnqueueEvent(String task, String queue, EnqueueOutcome outcome, String jobId, String keyPreview,
            String keyDigest, Instant at) {
        this.task = Objects.requireNonNull(task);
        this.queue = Objects.requireNonNull(queue);
        this.outcome = outcome;
        this.jobId = jobId;
        this.keyPreview = keyPreview;
        this.keyDigest = keyDigest;
        this.at = Objects.requireNonNull(at);
    }

    /** The task enqueued. */
    public String task() {
        return task;
    }

    /** The queue the job was enqueued to. */
    public String queue() {
        return queue;
    }

    /** What happened to the entry; empty when it was refused as a conflict (see {@link #conflict()}). */
    public Optional<EnqueueOutcome> outcome() {
        return Optional.ofNullable(outcome);
    }

    /** Whether the entry's key was bound to a different request ({@link IdempotencyConflictException}). */
    public boolean conflict() {
        return outcome == null;
    }

    /** The job the entry resolved to, or, for a conflict, the job holding its key if known. */
    public Optional<String> jobId() {
        return Optional.ofNullable(jobId);
    }

    /** A bounded preview of the key the call named: never the whole key. */
    public Optional<String> keyPreview() {
        return Optional.ofNullable(keyPreview);
    }

    /** The SHA-256 (lowercase hex) of the key the call named. */
    public Optional<String> keyDigest() {
        return Optional.ofNullable(keyDigest);
    }

    /** When the enqueue returned, by this process's clock. */
    public Instant at() {
        return at;
    }

    @Override
    public String toString() {
        return "EnqueueEvent[" + task + " on " + queue + ": " + (conflict() ? "CONFLICT" : outcome)
                + (jobId == null ? "" : ", job " + jobId) + (keyPreview == null ? "" : ", key " + keyPreview) + "]";
    }
}
