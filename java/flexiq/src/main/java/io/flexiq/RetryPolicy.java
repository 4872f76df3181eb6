package io.flexiq;

import io.flexiq.internal.Durations;
import java.time.Duration;
import java.util.Objects;

/**
 * How long a failed job waits before its next attempt: {@code initialDelay * multiplier^(n-1)},
 * capped at {@code maxDelay}, spread by up to {@code jitter} of itself either way so that jobs
 * failing together do not retry together. Delays are counted in whole milliseconds, from 0 to
 * 36500 days; however many attempts fail, the wait never grows past {@code maxDelay} (before
 * jitter). Instances are immutable.
 */
public final class RetryPolicy {
    /** One second, doubling, capped at one hour, with 10% jitter. */
    public static final RetryPolicy DEFAULT =
            new RetryPolicy(Duration.ofSeconds(1), Duration.ofHours(1), 2.0, 0.1);

    private final Duration initialDelay;
    private final Duration maxDelay;
    private final double multiplier;
    private final double jitter;

    private RetryPolicy(Duration initialDelay, Duration maxDelay, double multiplier, double jitter) {
        this.initialDelay = Durations.stored("initialDelay", initialDelay);
        this.maxDelay = Durations.stored("maxDelay", maxDelay);
        if (maxDelay.compareTo(initialDelay) < 0) {
            throw new IllegalArgumentException("maxDelay must not be shorter than initialDelay");
        }
        if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
            throw new IllegalArgumentException("multiplier must be a finite number >= 1, got " + multiplier);
        }
        if (!(jitter >= 0.0 && jitter <= 1.0)) {
            throw new IllegalArgumentException("jitter must be between 0 and 1, got " + jitter);
        }
        this.multiplier = multiplier;
        this.jitter = jitter;
    }

    /**
     * Doubles the delay after each failure, from {@code initialDelay} up to {@code maxDelay}.
     *
     * @throws IllegalArgumentException unless both are between 0 and 36500 days and
     *     {@code maxDelay} is not shorter than {@code initialDelay}
     */
    public static RetryPolicy exponential(Duration initialDelay, Duration maxDelay) {
        return new RetryPolicy(initialDelay, maxDelay, 2.0, DEFAULT.jitter);
    }

    /**
     * Waits the same {@code delay} after every failure.
     *
     * @throws IllegalArgumentException unless between 0 and 36500 days
     */
    public static RetryPolicy fixed(Duration delay) {
        return new RetryPolicy(delay, delay, 1.0, DEFAULT.jitter);
    }

    /** A copy with another growth factor per failure (at least 1). */
    public RetryPolicy withMultiplier(double multiplier) {
        return new RetryPolicy(initialDelay, maxDelay, multiplier, jitter);
    }

    /** A copy with another jitter fraction (0 for none, at most 1). */
    public RetryPolicy withJitter(double jitter) {
        return new RetryPolicy(initialDelay, maxDelay, multiplier, jitter);
    }

    /** The delay before the second attempt. */
    public Duration initialDelay() {
        return initialDelay;
    }

    /** The longest delay between attempts, before jitter. */
    public Duration maxDelay() {
        return maxDelay;
    }

    /** The factor by which the delay grows after each failure. */
    public double multiplier() {
        return multiplier;
    }

    /** The fraction by which each delay may be moved either way at random. */
    public double jitter() {
        return jitter;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof RetryPolicy)) {
            return false;
        }
        RetryPolicy other = (RetryPolicy) o;
        return initialDelay.equals(other.initialDelay)
                && maxDelay.equals(other.maxDelay)
                && multiplier == other.multiplier
                && jitter == other.jitter;
    }

    @Override
    public int hashCode() {
        return Objects.hash(initialDelay, maxDelay, multiplier, jitter);
    }

    @Override
    public String toString() {
        return "RetryPolicy[initialDelay=" + initialDelay + ", maxDelay=" + maxDelay
                + ", multiplier=" + multiplier + ", jitter=" + jitter + "]";
    }
}
