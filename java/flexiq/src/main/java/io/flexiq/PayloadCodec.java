package io.flexiq;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Turns a job's serialized payload into the bytes PostgreSQL stores, and back: encryption at
 * rest ({@link AesGcmPayloadCodec}), for instance. Set one on {@link FlexiQ.Builder#payloadCodec}.
 *
 * <p>FlexiQ runs it after the payload is serialized and its key derived, so that a codec never
 * changes a key, and recognizes a replay by {@link #fingerprint} of the serialized bytes, never
 * by what the codec stored. Each job records the {@link #id} of the codec that encoded it; a
 * client decodes a job only with a codec of the same id, and reads jobs stored without a codec
 * as they are, so that a codec can be introduced while jobs wait.
 *
 * <p>Implementations must be thread-safe: workers decode on several threads at once.
 */
public interface PayloadCodec {
    /**
     * The name stored with every job this codec encodes: 1 to 64 characters of a-z, A-Z, 0-9,
     * {@code .}, {@code _} and {@code -}. Keep it while jobs it encoded may still wait.
     */
    String id();

    /**
     * The bytes to store for {@code payload}, the serialized payload of a job of {@code task}.
     * May differ from call to call for the same payload (a random nonce).
     */
    byte[] encode(String task, byte[] payload);

    /**
     * The serialized payload back from what {@link #encode} stored for a job of {@code task}.
     *
     * @throws PayloadDecodeException if the bytes cannot be decoded: a key this codec does not
     *     hold, bytes altered since they were stored, bytes stored for another task
     */
    byte[] decode(String task, byte[] stored);

    /**
     * The digest by which FlexiQ recognizes that a replay asks for the same payload; stored with
     * the job. Equal payloads must give equal digests, whatever key encodes them. The default is
     * SHA-256 of {@code payload}: anyone who reads the table and guesses a payload exactly can
     * confirm the guess, as with a derived key. A codec holding a secret may key it instead.
     */
    default byte[] fingerprint(byte[] payload) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(payload);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
