package io.flexiq.internal;

import io.flexiq.PayloadSerializationException;

/**
 * Input limits checked in Java before anything crosses into native code. The Rust core checks
 * the same limits with the same messages, so every binding refuses the same input.
 *
 * <p>Every string that crosses must be valid UTF-16: an unpaired surrogate has no UTF-8 form, and
 * replacing it would make different keys or names one.
 */
public final class Limits {
    /** The longest key accepted, in bytes of UTF-8. */
    public static final int MAX_KEY_BYTES = 512;
    /** The longest task name accepted, in bytes of UTF-8. */
    public static final int MAX_TASK_NAME_BYTES = 255;
    /** The longest scope, queue, tag or checkpoint name accepted, in bytes of UTF-8. */
    public static final int MAX_NAME_BYTES = 128;

    /**
     * The largest payload accepted, in bytes as stored (after a codec): PostgreSQL takes at most
     * 1 GiB in one message and refuses a larger one by closing the connection.
     */
    public static final int MAX_PAYLOAD_BYTES = 256 << 20;
    /** The most payload bytes, as stored, that one enqueue call sends in its statement. */
    public static final long MAX_BATCH_PAYLOAD_BYTES = 512L << 20;

    private Limits() {}

    /** Refuses a payload larger than {@link #MAX_PAYLOAD_BYTES} as stored. */
    public static void payloadSize(int bytes) {
        if (bytes > MAX_PAYLOAD_BYTES) {
            throw new PayloadSerializationException("the payload is " + bytes + " bytes as stored; the limit is "
                    + MAX_PAYLOAD_BYTES + " (256 MiB): store large data elsewhere and enqueue a reference to it");
        }
    }

    /** Refuses a batch whose payloads add up to more than {@link #MAX_BATCH_PAYLOAD_BYTES} as stored. */
    public static void batchPayloadSize(long bytes) {
        if (bytes > MAX_BATCH_PAYLOAD_BYTES) {
            throw new PayloadSerializationException("the batch's payloads are " + bytes
                    + " bytes as stored; one enqueue takes at most " + MAX_BATCH_PAYLOAD_BYTES
                    + " (512 MiB): split the batch into smaller calls");
        }
    }

    public static String key(String key) {
        return key("key", key);
    }

    /** A key by another name ({@code redriveKey}). */
    public static String key(String what, String key) {
        return checked(what, key, MAX_KEY_BYTES);
    }

    public static String taskName(String name) {
        return checked("task name", name, MAX_TASK_NAME_BYTES);
    }

    public static String name(String what, String value) {
        return checked(what, value, MAX_NAME_BYTES);
    }

    /** A string with no length limit (a URL) that must still cross exactly. */
    public static String text(String what, String value) {
        return checked(what, value, Long.MAX_VALUE);
    }

    /**
     * Refuses null, empty, not valid UTF-16, longer than {@code maxBytes} of UTF-8 or holding a
     * NUL, in that order. One pass over the chars, no copy: this runs on every enqueue.
     */
    private static String checked(String what, String value, long maxBytes) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (value.isEmpty()) {
            throw new IllegalArgumentException(what + " must not be empty");
        }
        long bytes = 0;
        long nulAt = -1;
        for (int i = 0, n = value.length(); i < n; i++) {
            char c = value.charAt(i);
            if (c < 0x80) {
                if (c == 0 && nulAt < 0) {
                    nulAt = bytes;
                }
                bytes += 1;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (!Character.isSurrogate(c)) {
                bytes += 3;
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(value.charAt(i + 1))) {
                bytes += 4;
                i++;
            } else {
                throw new IllegalArgumentException(what + " is not valid UTF-16: unpaired surrogate U+"
                        + Integer.toHexString(c).toUpperCase(java.util.Locale.ROOT) + " at index " + i
                        + "; a string must hold whole characters");
            }
        }
        if (bytes > maxBytes) {
            throw new IllegalArgumentException(
                    what + " is " + bytes + " bytes of UTF-8; the limit is " + maxBytes);
        }
        if (nulAt >= 0) {
            throw new IllegalArgumentException(
                    what + " must not contain a NUL character (found at byte " + nulAt + ")");
        }
        return value;
    }
}
