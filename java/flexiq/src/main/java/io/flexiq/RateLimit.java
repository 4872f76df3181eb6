package io.flexiq;

import io.flexiq.internal.Durations;
import io.flexiq.internal.Limits;
import java.time.Duration;
import java.util.Objects;

/**
 * At most so many job starts of a queue, or of a concurrency key, within any period of a given
 * length, across every worker process. Set with {@link FlexiQ#setRateLimit}; stored in
 * PostgreSQL, where every claim keeps it, so one process may set it for all. Immutable.
 *
 * <pre>{@code
 * queue.setRateLimit(RateLimit.ofQueue("payments", 100, Duration.ofMinutes(1)));
 * }</pre>
 */
public final class RateLimit {
    private final boolean ofQueue;
    private final String name;
    private final int starts;
    private final Duration period;

    private RateLimit(boolean ofQueue, String name, int starts, Duration period) {
        if (starts < 1 || starts > 100_000) {
            throw new IllegalArgumentException("a rate limit allows 1 to 100000 starts per period, got " + starts
                    + " (for more, limit fewer starts over a shorter period)");
        }
        this.ofQueue = ofQueue;
        this.name = name;
        this.starts = starts;
        this.period = Durations.storedPositive("rate limit period", period);
    }

    /**
     * At most {@code starts} jobs of {@code queue} start within any {@code period}.
     *
     * @throws IllegalArgumentException if the queue name is invalid, {@code starts} is not between
     *     1 and 100,000, or the period is not between 1 ms and 36500 days
     */
    public static RateLimit ofQueue(String queue, int starts, Duration period) {
        return new RateLimit(true, Limits.name("queue", queue), starts, period);
    }

    /**
     * At most {@code starts} jobs with concurrency key {@code key} (see
     * {@link EnqueueOptions.Builder#concurrencyKey}) start within any {@code period}, whatever
     * their queue.
     *
     * @throws IllegalArgumentException if the key is invalid, {@code starts} is not between 1 and
     *     100,000, or the period is not between 1 ms and 36500 days
     */
    public static RateLimit ofConcurrencyKey(String key, int starts, Duration period) {
        return new RateLimit(false, Limits.name("concurrencyKey", key), starts, period);
    }

    /** Whether this limits a queue (else a concurrency key). */
    public boolean ofQueue() {
        return ofQueue;
    }

    /** The queue or concurrency key limited. */
    public String name() {
        return name;
    }

    /** How many starts the period allows. */
    public int starts() {
        return starts;
    }

    /** The length of the sliding period. */
    public Duration period() {
        return period;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RateLimit r && r.ofQueue == ofQueue && r.name.equals(name) && r.starts == starts
                && r.period.equals(period);
    }

    @Override
    public int hashCode() {
        return Objects.hash(ofQueue, name, starts, period);
    }

    @Override
    public String toString() {
        return "RateLimit[" + (ofQueue ? "queue " : "concurrency key ") + name + ": " + starts + " per " + period + "]";
    }
}
