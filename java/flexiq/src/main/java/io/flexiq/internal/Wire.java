package io.flexiq.internal;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The wire format of native calls; its Rust twin is {@code flexiq-jni-shell/src/wire.rs}.
 *
 * <p>A message is a sequence of fields whose layout each call fixes (see {@link NativeBridge}).
 * Numbers are little-endian: a boolean one byte (0 or 1), {@code int}, {@code long},
 * {@code double} (IEEE 754 bits). A byte string or a text is an {@code int} length and then its
 * bytes; length -1 is {@code null}. Text is UTF-8, except that an unpaired surrogate is written
 * in its three-byte form, which is not UTF-8: the native side refuses it where text must be
 * exact (keys, names) instead of turning different strings into one. An optional number is a
 * boolean and then, if true, the number. A list is an {@code int} count and its entries.
 */
final class Wire {
    private Wire() {}

    /** Writes one request into a growing array. */
    static final class Writer {
        private byte[] buf;
        private int pos;

        Writer(int capacity) {
            buf = new byte[Math.max(capacity, 16)];
        }

        private void ensure(int more) {
            if (buf.length - pos < more) {
                buf = Arrays.copyOf(buf, Math.max(buf.length * 2, Math.addExact(pos, more)));
            }
        }

        Writer bool(boolean value) {
            ensure(1);
            buf[pos++] = (byte) (value ? 1 : 0);
            return this;
        }

        Writer i32(int value) {
            ensure(4);
            putInt(pos, value);
            pos += 4;
            return this;
        }

        private void putInt(int at, int value) {
            buf[at] = (byte) value;
            buf[at + 1] = (byte) (value >>> 8);
            buf[at + 2] = (byte) (value >>> 16);
            buf[at + 3] = (byte) (value >>> 24);
        }

        Writer i64(long value) {
            ensure(8);
            for (int i = 0; i < 8; i++) {
                buf[pos++] = (byte) (value >>> (8 * i));
            }
            return this;
        }

        Writer f64(double value) {
            return i64(Double.doubleToRawLongBits(value));
        }

        /** An optional number: absent when {@code present} is false. */
        Writer optI64(boolean present, long value) {
            bool(present);
            return present ? i64(value) : this;
        }

        Writer bytes(byte[] value) {
            if (value == null) {
                return i32(-1);
            }
            i32(value.length);
            ensure(value.length);
            System.arraycopy(value, 0, buf, pos, value.length);
            pos += value.length;
            return this;
        }

        /** Exact text: an unpaired surrogate goes over as such, for the native side to refuse. */
        Writer string(String value) {
            return utf8(value, false);
        }

        /** Free text (a message to store): an unpaired surrogate becomes U+FFFD. */
        Writer text(String value) {
            return utf8(value, true);
        }

        Writer strings(String[] values) {
            i32(values.length);
            for (String v : values) {
                string(v);
            }
            return this;
        }

        private Writer utf8(String s, boolean replaceUnpaired) {
            if (s == null) {
                return i32(-1);
            }
            int n = s.length();
            ensure(4 + 3 * n);
            int lengthAt = pos;
            pos += 4;
            for (int i = 0; i < n; i++) {
                char c = s.charAt(i);
                if (c < 0x80) {
                    buf[pos++] = (byte) c;
                } else if (c < 0x800) {
                    buf[pos++] = (byte) (0xC0 | (c >> 6));
                    buf[pos++] = (byte) (0x80 | (c & 0x3F));
                } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    int cp = Character.toCodePoint(c, s.charAt(++i));
                    buf[pos++] = (byte) (0xF0 | (cp >> 18));
                    buf[pos++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
                    buf[pos++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
                    buf[pos++] = (byte) (0x80 | (cp & 0x3F));
                } else {
                    char out = replaceUnpaired && Character.isSurrogate(c) ? '\uFFFD' : c;
                    buf[pos++] = (byte) (0xE0 | (out >> 12));
                    buf[pos++] = (byte) (0x80 | ((out >> 6) & 0x3F));
                    buf[pos++] = (byte) (0x80 | (out & 0x3F));
                }
            }
            putInt(lengthAt, pos - lengthAt - 4);
            return this;
        }

        /** The message written so far. */
        byte[] toBytes() {
            return Arrays.copyOf(buf, pos);
        }
    }

    /** Reads one response; a null response (the call wrote nothing) reads as empty. */
    static final class Reader {
        private final byte[] buf;
        private int pos;

        Reader(byte[] response) {
            buf = response == null ? new byte[0] : response;
        }

        private int take(int n) {
            if (n < 0 || buf.length - pos < n) {
                throw new IllegalStateException("native response ends early: " + n + " bytes wanted at offset "
                        + pos + " of " + buf.length + "; the FlexiQ jar and its native library must come from one build");
            }
            int at = pos;
            pos += n;
            return at;
        }

        boolean bool() {
            return buf[take(1)] != 0;
        }

        int i32() {
            int at = take(4);
            return (buf[at] & 0xFF) | (buf[at + 1] & 0xFF) << 8 | (buf[at + 2] & 0xFF) << 16 | (buf[at + 3] & 0xFF) << 24;
        }

        long i64() {
            int at = take(8);
            long v = 0;
            for (int i = 7; i >= 0; i--) {
                v = (v << 8) | (buf[at + i] & 0xFF);
            }
            return v;
        }

        double f64() {
            return Double.longBitsToDouble(i64());
        }

        /** An optional number as a boxed value, null when absent. */
        Long optI64() {
            return bool() ? i64() : null;
        }

        byte[] bytes() {
            int n = i32();
            if (n == -1) {
                return null;
            }
            int at = take(n);
            return Arrays.copyOfRange(buf, at, at + n);
        }

        String string() {
            int n = i32();
            if (n == -1) {
                return null;
            }
            int at = take(n);
            return new String(buf, at, n, StandardCharsets.UTF_8);
        }
    }
}
