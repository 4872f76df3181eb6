package io.flexiq;

import io.flexiq.internal.Limits;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * The jobs a bulk action takes (see {@link FlexiQ#cancelAll}, {@link FlexiQ#purgeAll},
 * {@link FlexiQ#redriveAll}): those in one state, and of a queue, of a task and created within
 * a time range, when those are set. Immutable; build one with {@link #builder(JobState)}.
 *
 * <pre>{@code
 * JobFilter incident = JobFilter.builder(JobState.DEAD).queue("billing")
 *         .createdFrom(Instant.parse("2026-12-07T10:00:00Z")).createdBefore(Instant.parse("2026-12-07T11:00:00Z"))
 *         .build();
 * long count = queue.countMatching(incident);   // show it, then, once confirmed:
 * BulkResult result = queue.redriveAll(incident, "incident-4711");
 * }</pre>
 */
public final class JobFilter {
    private final JobState state;
    private final String queue;
    private final String task;
    private final Instant createdFrom;
    private final Instant createdBefore;

    private JobFilter(Builder b) {
        this.state = b.state;
        this.queue = b.queue;
        this.task = b.task;
        this.createdFrom = b.createdFrom;
        this.createdBefore = b.createdBefore;
    }

    /**
     * A builder for the jobs in {@code state}, which may not be {@link JobState#RUNNING}: a
     * running job is its worker's until it finishes.
     */
    public static Builder builder(JobState state) {
        return new Builder(state);
    }

    /** The state the jobs are in. */
    public JobState state() {
        return state;
    }

    /** Only jobs of this queue, if set. */
    public Optional<String> queue() {
        return Optional.ofNullable(queue);
    }

    /** Only jobs of this task, if set. */
    public Optional<String> task() {
        return Optional.ofNullable(task);
    }

    /** Only jobs created at or after this, if set. */
    public Optional<Instant> createdFrom() {
        return Optional.ofNullable(createdFrom);
    }

    /** Only jobs created before this, if set. */
    public Optional<Instant> createdBefore() {
        return Optional.ofNullable(createdBefore);
    }

    @Override
    public String toString() {
        return "JobFilter[state=" + state + (queue == null ? "" : ", queue=" + queue)
                + (task == null ? "" : ", task=" + task) + (createdFrom == null ? "" : ", createdFrom=" + createdFrom)
                + (createdBefore == null ? "" : ", createdBefore=" + createdBefore) + "]";
    }

    /** Builds a {@link JobFilter}; not thread-safe. */
    public static final class Builder {
        private final JobState state;
        private String queue;
        private String task;
        private Instant createdFrom;
        private Instant createdBefore;

        private Builder(JobState state) {
            this.state = Objects.requireNonNull(state, "state");
            if (state == JobState.RUNNING) {
                throw new IllegalArgumentException("a bulk action cannot take running jobs: they are their workers'"
                        + " until they finish; filter on another state");
            }
        }

        /** Only jobs of this queue. */
        public Builder queue(String queue) {
            this.queue = Limits.name("queue", queue);
            return this;
        }

        /** Only jobs of this task. */
        public Builder task(String task) {
            this.task = Limits.taskName(task);
            return this;
        }

        /** Only jobs created at or after this. */
        public Builder createdFrom(Instant createdFrom) {
            this.createdFrom = Objects.requireNonNull(createdFrom, "createdFrom");
            return this;
        }

        /** Only jobs created before this. */
        public Builder createdBefore(Instant createdBefore) {
            this.createdBefore = Objects.requireNonNull(createdBefore, "createdBefore");
            return this;
        }

        /**
         * The filter.
         *
         * @throws IllegalArgumentException if the time range is empty
         */
        public JobFilter build() {
            if (createdFrom != null && createdBefore != null && !createdFrom.isBefore(createdBefore)) {
                throw new IllegalArgumentException("the time range is empty: createdFrom " + createdFrom
                        + " must be before createdBefore " + createdBefore);
            }
            return new JobFilter(this);
        }
    }
}
