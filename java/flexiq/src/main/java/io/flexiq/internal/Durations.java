package io.flexiq.internal;

import java.time.Duration;
import java.time.Instant;

/**
 * Range checks for every duration and instant an option takes, shared by the builders. A value
 * out of range is refused with an {@link IllegalArgumentException} that states the range, rather
 * than overflowing later in Java, in native code or in PostgreSQL.
 */
public final class Durations {
    /**
     * The longest duration a job keeps (delay, timeout, key retention, retry delays): 36500 days,
     * about 100 years. PostgreSQL adds it to a time through float8 exactly (up to about 285
     * years), and a retry's jittered delay, up to twice as long, is still far from overflowing.
     */
    public static final Duration MAX_STORED = Duration.ofDays(36_500);
    /** The longest client or worker setting (connect timeout, lease, poll interval, shutdown timeout). */
    public static final Duration MAX_SETTING = Duration.ofDays(1);
    /** The shortest positive duration: they all cross into native code in whole milliseconds. */
    public static final Duration ONE_MILLISECOND = Duration.ofMillis(1);
    /** The earliest {@code runAt}. */
    public static final Instant MIN_RUN_AT = Instant.parse("0001-01-01T00:00:00Z");
    /** The latest {@code runAt} that is stored as given (to the microsecond). */
    public static final Instant MAX_RUN_AT = Instant.parse("9999-12-31T23:59:59.999999Z");
    /** The first instant past the range; instants before it lose only their nanoseconds. */
    private static final Instant END_OF_RUN_AT = Instant.parse("+10000-01-01T00:00:00Z");

    private Durations() {}

    /** A duration a job keeps, from 0 to {@link #MAX_STORED}. */
    public static Duration stored(String what, Duration value) {
        return between(what, value, Duration.ZERO, MAX_STORED);
    }

    /** A duration a job keeps that must be positive: from 1 ms to {@link #MAX_STORED}. */
    public static Duration storedPositive(String what, Duration value) {
        return between(what, value, ONE_MILLISECOND, MAX_STORED);
    }

    /** A client or worker setting: from 1 ms to {@link #MAX_SETTING}. */
    public static Duration setting(String what, Duration value) {
        return between(what, value, ONE_MILLISECOND, MAX_SETTING);
    }

    /** A client or worker setting that may be zero: from 0 to {@link #MAX_SETTING}. */
    public static Duration settingOrZero(String what, Duration value) {
        return between(what, value, Duration.ZERO, MAX_SETTING);
    }

    /** A stored time (a due time, a deadline), from {@link #MIN_RUN_AT} to {@link #MAX_RUN_AT}. */
    public static Instant instant(String what, Instant value) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (value.isBefore(MIN_RUN_AT) || !value.isBefore(END_OF_RUN_AT)) {
            throw new IllegalArgumentException(
                    what + " must be between " + MIN_RUN_AT + " and " + MAX_RUN_AT + ", got " + value);
        }
        return value;
    }

    private static Duration between(String what, Duration value, Duration min, Duration max) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(
                    what + " must be between " + describe(min) + " and " + describe(max) + ", got " + value);
        }
        return value;
    }

    /** "0", "1 ms", "1 day", "36500 days": the bounds as a person reads them. */
    private static String describe(Duration bound) {
        if (bound.isZero()) {
            return "0";
        }
        long days = bound.toDays();
        if (Duration.ofDays(days).equals(bound)) {
            return days == 1 ? "1 day" : days + " days";
        }
        return bound.toMillis() + " ms";
    }
}
