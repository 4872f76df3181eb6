package io.flexiq;

import java.time.Duration;

/** Argument checks for durations, shared by the option builders. */
final class Durations {
    private Durations() {}

    static Duration nonNegative(String what, Duration value) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (value.isNegative()) {
            throw new IllegalArgumentException(what + " must not be negative, got " + value);
        }
        return value;
    }

    static Duration positive(String what, Duration value) {
        nonNegative(what, value);
        if (value.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, got " + value);
        }
        return value;
    }
}
