package io.flexiq;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Encrypts payloads at rest with AES-256-GCM, under keys the application supplies: FlexiQ never
 * generates nor stores a key. Set it with {@link FlexiQ.Builder#payloadCodec}; build one with
 * {@link #builder()}. Immutable and thread-safe.
 *
 * <p>Each payload is stored as a version byte (1), the length of the key id, the key id (ASCII),
 * a random 12-byte nonce, and the ciphertext with its 128-bit tag. The header and the task's name
 * are authenticated with it, so that a payload copied to a job of another task, or relabelled
 * with another key id, fails to decode instead of running with the wrong data.
 *
 * <p>Keys rotate without downtime: add the new key beside the old one and
 * {@linkplain Builder#encryptWith encrypt with} it; jobs stored under the old key still decode.
 * Drop the old key once no job stored under it remains (finished jobs included, until maintenance
 * deletes them). A nonce is random, so encrypt fewer than 2<sup>32</sup> payloads under one key
 * (NIST SP 800-38D): rotate well before that.
 *
 * <p>By default, {@link #fingerprint} is the SHA-256 of the payload, with which anyone reading
 * the table can confirm a guessed payload; with a {@linkplain Builder#fingerprintKey fingerprint
 * key} it is an HMAC-SHA256 under that key instead. Keep that key for as long as replays must be
 * recognized: another key gives other fingerprints.
 */
public final class AesGcmPayloadCodec implements PayloadCodec {
    /** The {@link #id()} of this codec, stored with each job it encodes. */
    public static final String ID = "aes-256-gcm";
    /** The length of a key, in bytes: AES-256. */
    public static final int KEY_BYTES = 32;
    /** The least length of a fingerprint key, in bytes: as long as the HMAC-SHA256 output. */
    public static final int MIN_FINGERPRINT_KEY_BYTES = 32;

    private static final byte VERSION = 1;
    private static final int NONCE_BYTES = 12;
    private static final int TAG_BITS = 128;
    private static final int TAG_BYTES = TAG_BITS / 8;
    private static final int MAX_KEY_ID_LENGTH = 32;
    private static final Pattern KEY_ID = Pattern.compile("[A-Za-z0-9._-]{1," + MAX_KEY_ID_LENGTH + "}");
    private static final String TRANSFORMATION = "AES/GCM/NoPadding";
    private static final String HMAC = "HmacSHA256";

    private final Map<String, SecretKey> keys;
    private final String encryptWith;
    private final byte[] encryptHeader;
    private final SecretKey fingerprintKey;
    // Thread-safe; one for all encodes, seeded once.
    private final SecureRandom random = new SecureRandom();

    private AesGcmPayloadCodec(Builder b) {
        this.keys = Collections.unmodifiableMap(new LinkedHashMap<>(b.keys));
        this.encryptWith = b.encryptWith != null ? b.encryptWith : b.keys.keySet().iterator().next();
        this.encryptHeader = header(encryptWith);
        this.fingerprintKey = b.fingerprintKey;
    }

    /** Starts a builder without keys. */
    public static Builder builder() {
        return new Builder();
    }

    /** {@value #ID}. */
    @Override
    public String id() {
        return ID;
    }

    /** The id of the key that encrypts. */
    public String encryptsWith() {
        return encryptWith;
    }

    /** The ids of the keys that decrypt, in the order they were added. */
    public Set<String> keyIds() {
        return keys.keySet();
    }

    /**
     * The payload encrypted under the {@linkplain #encryptsWith() encrypting key}, with a fresh
     * random nonce: two encodes of one payload differ.
     */
    @Override
    public byte[] encode(String task, byte[] payload) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(payload, "payload");
        byte[] nonce = new byte[NONCE_BYTES];
        random.nextBytes(nonce);
        int headerLength = encryptHeader.length;
        byte[] stored = new byte[headerLength + NONCE_BYTES + payload.length + TAG_BYTES];
        System.arraycopy(encryptHeader, 0, stored, 0, headerLength);
        System.arraycopy(nonce, 0, stored, headerLength, NONCE_BYTES);
        try {
            Cipher cipher = cipher(Cipher.ENCRYPT_MODE, keys.get(encryptWith), nonce);
            cipher.updateAAD(encryptHeader);
            cipher.updateAAD(task.getBytes(StandardCharsets.UTF_8));
            cipher.doFinal(payload, 0, payload.length, stored, headerLength + NONCE_BYTES);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM failed to encrypt under key '" + encryptWith
                    + "' for task '" + task + "'", e);
        }
        return stored;
    }

    /**
     * The payload back, decrypted under the key whose id {@code stored} names.
     *
     * @throws PayloadDecodeException if this codec holds no key of that id, if the bytes do not
     *     authenticate (altered, stored for another task, or another key under that id), or if
     *     they are truncated or of an unknown format version
     */
    @Override
    public byte[] decode(String task, byte[] stored) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(stored, "stored");
        if (stored.length < 2) {
            throw truncated(task, stored.length);
        }
        if (stored[0] != VERSION) {
            throw new PayloadDecodeException("the payload of a job of task '" + task + "' is in format version "
                    + (stored[0] & 0xff) + " of " + ID + ", which this codec does not read (it reads version "
                    + VERSION + "): written by a newer FlexiQ, or not written by this codec; decode it with "
                    + "the FlexiQ version that wrote it");
        }
        int idLength = stored[1] & 0xff;
        int headerLength = 2 + idLength;
        if (idLength == 0 || idLength > MAX_KEY_ID_LENGTH || stored.length < headerLength + NONCE_BYTES + TAG_BYTES) {
            throw truncated(task, stored.length);
        }
        String keyId = new String(stored, 2, idLength, StandardCharsets.US_ASCII);
        if (!KEY_ID.matcher(keyId).matches()) {
            throw new PayloadDecodeException("the payload of a job of task '" + task + "' names no valid key id: "
                    + "its header was altered since it was stored, or it was not written by this codec");
        }
        SecretKey key = keys.get(keyId);
        if (key == null) {
            throw new PayloadDecodeException("the payload of a job of task '" + task + "' is encrypted under key '"
                    + keyId + "', which this codec does not hold (it holds " + String.join(", ", keys.keySet())
                    + "); add it with key(\"" + keyId + "\", …)");
        }
        byte[] nonce = Arrays.copyOfRange(stored, headerLength, headerLength + NONCE_BYTES);
        int offset = headerLength + NONCE_BYTES;
        try {
            Cipher cipher = cipher(Cipher.DECRYPT_MODE, key, nonce);
            cipher.updateAAD(stored, 0, headerLength);
            cipher.updateAAD(task.getBytes(StandardCharsets.UTF_8));
            return cipher.doFinal(stored, offset, stored.length - offset);
        } catch (AEADBadTagException e) {
            throw new PayloadDecodeException("the payload of a job does not authenticate under key '" + keyId
                    + "' for task '" + task + "': altered since stored, stored for another task, or a different "
                    + "key under that id; check that key '" + keyId + "' is the one that encrypted it", e);
        } catch (GeneralSecurityException e) {
            throw new PayloadDecodeException("the payload of a job of task '" + task + "' could not be decrypted "
                    + "under key '" + keyId + "': " + e.getClass().getSimpleName(), e);
        }
    }

    /**
     * The HMAC-SHA256 of {@code payload} under the fingerprint key when the codec has one, else
     * {@linkplain PayloadCodec#fingerprint the default} SHA-256; the same whichever key encrypts.
     */
    @Override
    public byte[] fingerprint(byte[] payload) {
        if (fingerprintKey == null) {
            return PayloadCodec.super.fingerprint(payload);
        }
        try {
            Mac mac = Mac.getInstance(HMAC);   // per call: a Mac is not thread-safe
            mac.init(fingerprintKey);
            return mac.doFinal(payload);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every Java platform has HmacSHA256", e);
        }
    }

    /** The codec's id and key ids, never key material. */
    @Override
    public String toString() {
        return "AesGcmPayloadCodec[" + ID + ", encrypts with " + encryptWith + ", decrypts "
                + String.join(", ", keys.keySet()) + (fingerprintKey == null ? "" : ", keyed fingerprint") + "]";
    }

    private static Cipher cipher(int mode, SecretKey key, byte[] nonce) throws GeneralSecurityException {
        // A Cipher per call: it is not thread-safe, and GCM refuses to reuse a nonce on one instance.
        Cipher cipher = Cipher.getInstance(TRANSFORMATION);
        cipher.init(mode, key, new GCMParameterSpec(TAG_BITS, nonce));
        return cipher;
    }

    private static byte[] header(String keyId) {
        byte[] id = keyId.getBytes(StandardCharsets.US_ASCII);
        byte[] header = new byte[2 + id.length];
        header[0] = VERSION;
        header[1] = (byte) id.length;
        System.arraycopy(id, 0, header, 2, id.length);
        return header;
    }

    private static PayloadDecodeException truncated(String task, int length) {
        return new PayloadDecodeException("the payload of a job of task '" + task + "' is truncated (" + length
                + " bytes): too short for the " + ID + " format, altered since it was stored or not written by "
                + "this codec");
    }

    private static String checkKeyId(String keyId) {
        Objects.requireNonNull(keyId, "keyId");
        if (!KEY_ID.matcher(keyId).matches()) {
            throw new IllegalArgumentException("key id '" + keyId + "' must be 1 to " + MAX_KEY_ID_LENGTH
                    + " characters of A-Z, a-z, 0-9, '.', '_' and '-'");
        }
        return keyId;
    }

    private static byte[] base64(String what, String text) {
        Objects.requireNonNull(text, what);
        try {
            return Base64.getDecoder().decode(text.trim());
        } catch (IllegalArgumentException e) {
            // Without the cause: the decoder's message quotes a character of the key.
            throw new IllegalArgumentException(what + " is not base64 text (the standard alphabet, as "
                    + "`openssl rand -base64 32` prints)");
        }
    }

    /**
     * Builds an {@link AesGcmPayloadCodec}: the keys that decrypt, the one that encrypts, and
     * optionally the fingerprint key. Copies every key it is given.
     */
    public static final class Builder {
        private final Map<String, SecretKey> keys = new LinkedHashMap<>();
        private String encryptWith;
        private SecretKey fingerprintKey;

        private Builder() {}

        /**
         * Adds a key that decrypts, of {@value AesGcmPayloadCodec#KEY_BYTES} bytes (copied), under
         * {@code keyId}: 1 to 32 characters of A-Z, a-z, 0-9, {@code .}, {@code _} and {@code -},
         * stored in clear with each payload it encrypts.
         *
         * @throws IllegalArgumentException if the id is invalid or already added, or the key is
         *     not 32 bytes long
         */
        public Builder key(String keyId, byte[] key) {
            checkKeyId(keyId);
            Objects.requireNonNull(key, "key");
            if (key.length != KEY_BYTES) {
                throw new IllegalArgumentException("key '" + keyId + "' is " + key.length + " bytes long; AES-256 takes "
                        + KEY_BYTES + " (random bytes, e.g. `openssl rand -base64 32`)");
            }
            if (keys.containsKey(keyId)) {
                throw new IllegalArgumentException("key '" + keyId + "' is added twice: give each key an id of its own");
            }
            keys.put(keyId, new SecretKeySpec(key, "AES"));   // SecretKeySpec copies the array
            return this;
        }

        /**
         * Adds a key that decrypts, from a {@link SecretKey} whose encoded form is its 32 bytes
         * (an AES key of a {@code KeyStore}, say).
         *
         * @throws IllegalArgumentException as {@link #key(String, byte[])}, or if the key is not an
         *     AES key or does not reveal its bytes
         */
        public Builder key(String keyId, SecretKey key) {
            checkKeyId(keyId);
            Objects.requireNonNull(key, "key");
            if (!"AES".equalsIgnoreCase(key.getAlgorithm())) {
                throw new IllegalArgumentException("key '" + keyId + "' is a " + key.getAlgorithm() + " key, not AES");
            }
            byte[] encoded = key.getEncoded();
            if (encoded == null) {
                throw new IllegalArgumentException("key '" + keyId + "' does not reveal its bytes (getEncoded() is null)");
            }
            try {
                return key(keyId, encoded);
            } finally {
                Arrays.fill(encoded, (byte) 0);
            }
        }

        /**
         * Adds a key that decrypts, from the base64 text of its 32 bytes, as
         * {@code openssl rand -base64 32} prints.
         *
         * @throws IllegalArgumentException as {@link #key(String, byte[])}, or if the text is not
         *     base64
         */
        public Builder keyBase64(String keyId, String base64) {
            checkKeyId(keyId);
            byte[] key = base64("key '" + keyId + "'", base64);
            try {
                return key(keyId, key);
            } finally {
                Arrays.fill(key, (byte) 0);
            }
        }

        /**
         * Chooses the key that encrypts, one of those {@linkplain #key added} (before or after
         * this call). Optional with a single key, which then encrypts.
         */
        public Builder encryptWith(String keyId) {
            this.encryptWith = checkKeyId(keyId);
            return this;
        }

        /**
         * Keys the fingerprint: HMAC-SHA256 under these bytes (copied, at least 32) instead of a
         * plain SHA-256, so that a reader of the table cannot confirm a guessed payload. Use a key
         * of its own, not one of the encryption keys, and keep it across rotations.
         *
         * @throws IllegalArgumentException if the key is shorter than 32 bytes
         */
        public Builder fingerprintKey(byte[] key) {
            Objects.requireNonNull(key, "key");
            if (key.length < MIN_FINGERPRINT_KEY_BYTES) {
                throw new IllegalArgumentException("the fingerprint key is " + key.length + " bytes long; it takes at least "
                        + MIN_FINGERPRINT_KEY_BYTES + " (random bytes, e.g. `openssl rand -base64 32`)");
            }
            this.fingerprintKey = new SecretKeySpec(key, HMAC);   // copies the array
            return this;
        }

        /**
         * Keys the fingerprint, from the base64 text of at least 32 bytes; see
         * {@link #fingerprintKey(byte[])}.
         */
        public Builder fingerprintKeyBase64(String base64) {
            byte[] key = base64("the fingerprint key", base64);
            try {
                return fingerprintKey(key);
            } finally {
                Arrays.fill(key, (byte) 0);
            }
        }

        /**
         * The codec.
         *
         * @throws IllegalArgumentException if {@link #encryptWith} names a key not added
         * @throws IllegalStateException if no key was added, or several without {@link #encryptWith}
         */
        public AesGcmPayloadCodec build() {
            if (keys.isEmpty()) {
                throw new IllegalStateException("no key: add the keys that decrypt with key(id, bytes)");
            }
            if (encryptWith == null && keys.size() > 1) {
                throw new IllegalStateException("several keys (" + String.join(", ", keys.keySet())
                        + "): choose the one that encrypts with encryptWith(id)");
            }
            if (encryptWith != null && !keys.containsKey(encryptWith)) {
                throw new IllegalArgumentException("encryptWith(\"" + encryptWith + "\") names a key not added (keys: "
                        + String.join(", ", keys.keySet()) + "): add it with key(\"" + encryptWith + "\", …)");
            }
            return new AesGcmPayloadCodec(this);
        }
    }
}
