package io.flexiq;

import io.flexiq.internal.Durations;
import java.time.Duration;
import java.util.Objects;

/**
 * How a client takes part in its schema's maintenance, set with
 * {@link FlexiQ.Builder#maintenance(Maintenance)}. Immutable; build one with {@link #builder()}.
 *
 * <p>Maintenance releases the keys whose retention has passed, puts back to work the jobs whose
 * lease has passed (of every queue, worked here or not), and deletes finished jobs once their
 * retention has passed, a batch at a time. One client per schema does it: among the clients that
 * take part, the one whose dedicated connection holds the schema's PostgreSQL advisory lock. A
 * client takes part once it has built a {@link Worker}, unless maintenance is
 * {@linkplain Builder#enabled(boolean) disabled}; the others try for the lock at every
 * {@linkplain Builder#interval(Duration) interval}, and one of them takes over within an interval
 * of the holder's process dying or its client closing.
 *
 * <p>A finished job whose key is still held is never deleted, whatever its retention: a replay of
 * its key must still find it. It is deleted once its key is released and its retention has passed.
 */
public final class Maintenance {
    /** How long completed jobs are kept by default: 24 hours. */
    public static final Duration DEFAULT_COMPLETED_RETENTION = Duration.ofHours(24);
    /** How long cancelled jobs are kept by default: 24 hours. */
    public static final Duration DEFAULT_CANCELLED_RETENTION = Duration.ofHours(24);
    /** How long dead jobs are kept by default: 7 days, time to look at them and redrive them. */
    public static final Duration DEFAULT_DEAD_RETENTION = Duration.ofDays(7);
    /** The default time between two passes, and between two tries for the lock: 5 seconds. */
    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(5);
    /** The default number of jobs of each final state one delete statement removes: 1000. */
    public static final int DEFAULT_BATCH_SIZE = 1000;
    /** The largest batch size. */
    public static final int MAX_BATCH_SIZE = 100_000;

    private static final Maintenance DEFAULTS = builder().build();

    private final boolean enabled;
    private final Duration interval;
    private final Duration completedRetention;
    private final Duration cancelledRetention;
    private final Duration deadRetention;
    private final int batchSize;

    private Maintenance(Builder b) {
        this.enabled = b.enabled;
        this.interval = b.interval;
        this.completedRetention = b.completedRetention;
        this.cancelledRetention = b.cancelledRetention;
        this.deadRetention = b.deadRetention;
        this.batchSize = b.batchSize;
    }

    /** Maintenance with every default: enabled where workers run, retentions of 24 h, 24 h and 7 days. */
    public static Maintenance defaults() {
        return DEFAULTS;
    }

    /** Starts a builder holding the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** Whether the client takes part in the election once it has built a worker. */
    public boolean enabled() {
        return enabled;
    }

    /** The time between two passes of the elected client, and between two tries of the others. */
    public Duration interval() {
        return interval;
    }

    /** How long completed jobs are kept after they finished. */
    public Duration completedRetention() {
        return completedRetention;
    }

    /** How long cancelled jobs are kept after they were cancelled. */
    public Duration cancelledRetention() {
        return cancelledRetention;
    }

    /** How long dead jobs are kept after they were dead-lettered. */
    public Duration deadRetention() {
        return deadRetention;
    }

    /** The most jobs of each final state one delete statement removes. */
    public int batchSize() {
        return batchSize;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Maintenance m && enabled == m.enabled && interval.equals(m.interval)
                && completedRetention.equals(m.completedRetention)
                && cancelledRetention.equals(m.cancelledRetention) && deadRetention.equals(m.deadRetention)
                && batchSize == m.batchSize;
    }

    @Override
    public int hashCode() {
        return Objects.hash(enabled, interval, completedRetention, cancelledRetention, deadRetention, batchSize);
    }

    @Override
    public String toString() {
        return "Maintenance{enabled=" + enabled + ", interval=" + interval + ", completedRetention="
                + completedRetention + ", cancelledRetention=" + cancelledRetention + ", deadRetention="
                + deadRetention + ", batchSize=" + batchSize + "}";
    }

    /** Builds {@link Maintenance} options; starts from the defaults. */
    public static final class Builder {
        private boolean enabled = true;
        private Duration interval = DEFAULT_INTERVAL;
        private Duration completedRetention = DEFAULT_COMPLETED_RETENTION;
        private Duration cancelledRetention = DEFAULT_CANCELLED_RETENTION;
        private Duration deadRetention = DEFAULT_DEAD_RETENTION;
        private int batchSize = DEFAULT_BATCH_SIZE;

        private Builder() {}

        /**
         * Whether this client takes part in the election once it has built a worker (default
         * true). A client that opts out never runs maintenance on its own;
         * {@link FlexiQ#runMaintenance()} still runs a pass on demand.
         */
        public Builder enabled(boolean enabled) {
            this.enabled = enabled;
            return this;
        }

        /**
         * The time between two passes, and between two tries for the lock while another client
         * holds it (default 5 s): a dead holder is replaced within about this long.
         *
         * @throws IllegalArgumentException unless between 1 ms and 1 day
         */
        public Builder interval(Duration interval) {
            this.interval = Durations.setting("maintenance interval", interval);
            return this;
        }

        /**
         * How long a completed job is kept after it finished (default 24 h).
         *
         * @throws IllegalArgumentException unless between 0 and 36500 days
         */
        public Builder completedRetention(Duration retention) {
            this.completedRetention = Durations.stored("completedRetention", retention);
            return this;
        }

        /**
         * How long a cancelled job is kept after it was cancelled (default 24 h).
         *
         * @throws IllegalArgumentException unless between 0 and 36500 days
         */
        public Builder cancelledRetention(Duration retention) {
            this.cancelledRetention = Durations.stored("cancelledRetention", retention);
            return this;
        }

        /**
         * How long a dead job is kept after it was dead-lettered (default 7 days); redrive it
         * before then to run it again.
         *
         * @throws IllegalArgumentException unless between 0 and 36500 days
         */
        public Builder deadRetention(Duration retention) {
            this.deadRetention = Durations.stored("deadRetention", retention);
            return this;
        }

        /**
         * The most jobs of each final state one delete statement removes (default 1000): each
         * statement holds its row locks and writes its WAL only for that many. A pass runs up to
         * 100 such statements, then the next pass goes on at once.
         *
         * @throws IllegalArgumentException unless between 1 and {@value Maintenance#MAX_BATCH_SIZE}
         */
        public Builder batchSize(int batchSize) {
            if (batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
                throw new IllegalArgumentException(
                        "maintenance batchSize must be between 1 and " + MAX_BATCH_SIZE + ", got " + batchSize);
            }
            this.batchSize = batchSize;
            return this;
        }

        /** The options. */
        public Maintenance build() {
            return new Maintenance(this);
        }
    }
}
