package io.flexiq;

import io.flexiq.internal.Limits;
import java.util.Optional;

/**
 * Which jobs {@link FlexiQ#listJobs} lists, and which page: every filter is optional, and the
 * jobs that match all of those set come newest first. Immutable; build one with
 * {@link #builder()}.
 *
 * <pre>{@code
 * JobPage page = queue.listJobs(JobQuery.builder().queue("billing").state(JobState.DEAD).build());
 * while (page.nextCursor().isPresent()) {
 *     page = queue.listJobs(JobQuery.builder().queue("billing").state(JobState.DEAD)
 *             .after(page.nextCursor().get()).build());
 * }
 * }</pre>
 */
public final class JobQuery {
    /** The most jobs one page holds. */
    public static final int MAX_LIMIT = 500;
    /** How many jobs a page holds unless {@link Builder#limit} says otherwise. */
    public static final int DEFAULT_LIMIT = 50;

    private final String queue;
    private final JobState state;
    private final String task;
    private final int limit;
    private final String after;

    private JobQuery(Builder b) {
        this.queue = b.queue;
        this.state = b.state;
        this.task = b.task;
        this.limit = b.limit;
        this.after = b.after;
    }

    /** A builder with no filter, the default limit, from the first page. */
    public static Builder builder() {
        return new Builder();
    }

    /** Only jobs of this queue, if set. */
    public Optional<String> queue() {
        return Optional.ofNullable(queue);
    }

    /** Only jobs in this state, if set. */
    public Optional<JobState> state() {
        return Optional.ofNullable(state);
    }

    /** Only jobs of this task, if set. */
    public Optional<String> task() {
        return Optional.ofNullable(task);
    }

    /** The most jobs the page holds. */
    public int limit() {
        return limit;
    }

    /** The cursor of the previous page, if this is not the first. */
    public Optional<String> after() {
        return Optional.ofNullable(after);
    }

    @Override
    public String toString() {
        return "JobQuery[queue=" + queue + ", state=" + state + ", task=" + task + ", limit=" + limit
                + (after == null ? "" : ", after=" + after) + "]";
    }

    /** Builds a {@link JobQuery}; each setter checks its argument at once. */
    public static final class Builder {
        private String queue;
        private JobState state;
        private String task;
        private int limit = DEFAULT_LIMIT;
        private String after;

        private Builder() {}

        /** Only jobs of this queue. */
        public Builder queue(String queue) {
            this.queue = Limits.name("queue", queue);
            return this;
        }

        /** Only jobs in this state ({@link JobState#DEAD} for the dead letters). */
        public Builder state(JobState state) {
            if (state == null) {
                throw new IllegalArgumentException("state must not be null");
            }
            this.state = state;
            return this;
        }

        /** Only jobs of this task. */
        public Builder task(String task) {
            this.task = Limits.taskName(task);
            return this;
        }

        /**
         * The most jobs the page holds, 1 to {@value JobQuery#MAX_LIMIT} (default
         * {@value JobQuery#DEFAULT_LIMIT}).
         */
        public Builder limit(int limit) {
            if (limit < 1 || limit > MAX_LIMIT) {
                throw new IllegalArgumentException("limit must be between 1 and " + MAX_LIMIT + ", got " + limit);
            }
            this.limit = limit;
            return this;
        }

        /**
         * The page after the one whose {@link JobPage#nextCursor()} this is. A cursor is opaque:
         * pass it back as it came, with the same filters.
         */
        public Builder after(String cursor) {
            this.after = Limits.text("cursor", cursor);
            return this;
        }

        /** The query. */
        public JobQuery build() {
            return new JobQuery(this);
        }
    }
}
