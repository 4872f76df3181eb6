package io.flexiq;

import java.nio.charset.StandardCharsets;

/**
 * Input limits checked in Java before anything crosses into native code. The Rust core checks
 * the same limits with the same messages, so every binding refuses the same input.
 */
final class Limits {
    /** The longest key accepted, in bytes of UTF-8. */
    static final int MAX_KEY_BYTES = 512;
    /** The longest task name accepted, in bytes of UTF-8. */
    static final int MAX_TASK_NAME_BYTES = 255;
    /** The longest scope or queue name accepted, in bytes of UTF-8. */
    static final int MAX_NAME_BYTES = 128;

    private Limits() {}

    static String key(String key) {
        return nonEmptyBoundedWithoutNul("key", key, MAX_KEY_BYTES);
    }

    static String taskName(String name) {
        return nonEmptyBoundedWithoutNul("task name", name, MAX_TASK_NAME_BYTES);
    }

    static String name(String what, String value) {
        return nonEmptyBoundedWithoutNul(what, value, MAX_NAME_BYTES);
    }

    private static String nonEmptyBoundedWithoutNul(String what, String value, int maxBytes) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (value.isEmpty()) {
            throw new IllegalArgumentException(what + " must not be empty");
        }
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        if (utf8.length > maxBytes) {
            throw new IllegalArgumentException(
                    what + " is " + utf8.length + " bytes of UTF-8; the limit is " + maxBytes);
        }
        for (int i = 0; i < utf8.length; i++) {
            if (utf8[i] == 0) {
                throw new IllegalArgumentException(
                        what + " must not contain a NUL character (found at byte " + i + ")");
            }
        }
        return value;
    }
}
