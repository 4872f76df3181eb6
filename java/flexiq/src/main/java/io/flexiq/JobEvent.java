package io.flexiq;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/** A job's change of state, for {@link FlexiQListener#onJob}. Immutable. */
public final class JobEvent {
    /** What happened to the job. */
    public enum Kind {
        /** A worker started an attempt ({@link #startLatency()} says how long it waited). */
        STARTED,
        /** An attempt succeeded and its completion committed. */
        COMPLETED,
        /** An attempt failed ({@link #error()}) and the job runs again after {@link #retryDelay()}. */
        RETRIED,
        /** An attempt failed ({@link #error()}), or its lease passed, with no attempts left: the job is dead. */
        DEAD_LETTERED,
        /**
         * A worker's lease on the job passed (the worker died or stalled) and the job was put back
         * to work ({@link #error()} names the attempt); with no attempts left it is
         * {@link #DEAD_LETTERED} instead.
         */
        RESCUED,
        /**
         * An attempt's outcome reached PostgreSQL after its lease had passed and a rescue had
         * moved the job, and was recorded all the same, since no later attempt had started: the
         * {@link #COMPLETED}, {@link #RETRIED} or {@link #DEAD_LETTERED} event of that outcome
         * follows, and the rescue's failed attempt does not count.
         */
        RECORDED_LATE,
        /**
         * A worker that closed gave back the attempt unfinished (its handler had not started, or
         * did not end within the shutdown timeout): the job is due again at once, and the
         * attempt does not count.
         */
        GIVEN_BACK,
        /** A dead job was put back to work ({@link FlexiQ#redrive}). */
        REDRIVEN,
        /** A pending job was cancelled ({@link FlexiQ#cancel}). */
        CANCELLED,
        /** A job was deleted ({@link FlexiQ#purge}). */
        PURGED
    }

    private final Kind kind;
    private final String jobId;
    private final String task;
    private final String queue;
    private final int attempt;
    private final int maxAttempts;
    private final String error;
    private final Duration retryDelay;
    private final Duration handlerDuration;
    private final Duration startLatency;
    private final Instant at;

    JobEvent(Kind kind, String jobId, String task, String queue, int attempt, int maxAttempts,
            String error, Duration retryDelay, Duration handlerDuration, Duration startLatency) {
        this.kind = kind;
        this.jobId = jobId;
        this.task = task;
        this.queue = queue;
        this.attempt = attempt;
        this.maxAttempts = maxAttempts;
        this.error = error;
        this.retryDelay = retryDelay;
        this.handlerDuration = handlerDuration;
        this.startLatency = startLatency;
        this.at = Instant.now();
    }

    /** What happened. */
    public Kind kind() {
        return kind;
    }

    /** The job's id. */
    public String jobId() {
        return jobId;
    }

    /** The job's task name. */
    public String task() {
        return task;
    }

    /** The job's queue. */
    public String queue() {
        return queue;
    }

    /** The attempt the event is about (0 when the job has not run yet). */
    public int attempt() {
        return attempt;
    }

    /** The job's attempt budget. */
    public int maxAttempts() {
        return maxAttempts;
    }

    /** Why the attempt failed: for {@link Kind#RETRIED}, {@link Kind#DEAD_LETTERED} and {@link Kind#RESCUED}. */
    public Optional<String> error() {
        return Optional.ofNullable(error);
    }

    /** How long until the job is due again: for {@link Kind#RETRIED}. */
    public Optional<Duration> retryDelay() {
        return Optional.ofNullable(retryDelay);
    }

    /**
     * How long the handler ran: for {@link Kind#COMPLETED}, and for failures whose handler ran
     * (not for an attempt whose payload did not read, or that timed out before it started).
     */
    public Optional<Duration> handlerDuration() {
        return Optional.ofNullable(handlerDuration);
    }

    /**
     * For {@link Kind#STARTED}: from the moment the job was due (its enqueue, or its scheduled or
     * retry time) to its handler's start, by PostgreSQL's clock up to the claim and this
     * process's after it.
     */
    public Optional<Duration> startLatency() {
        return Optional.ofNullable(startLatency);
    }

    /** When it happened, by this process's clock. */
    public Instant at() {
        return at;
    }

    @Override
    public String toString() {
        return "JobEvent[" + kind + " job " + jobId + " (" + task + " on " + queue + "), attempt " + attempt + "/"
                + maxAttempts + (error == null ? "" : ": " + error) + "]";
    }
}
