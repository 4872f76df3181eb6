package io.flexiq;

import io.flexiq.internal.NativeBridge;

/**
 * How a client's payloads are stored: through its {@link PayloadCodec}, if it has one. Encodes
 * serialized payloads on their way in and decodes stored ones on their way out, naming the job
 * whose payload cannot be decoded.
 */
final class StoredPayloads {
    /** The client's codec, or null: payloads are stored as serialized. */
    private final PayloadCodec codec;

    StoredPayloads(PayloadCodec codec) {
        this.codec = codec;
    }

    /** Whether payloads are encoded before they are stored. */
    boolean encodes() {
        return codec != null;
    }

    /** What the codec makes of a serialized payload of {@code task}, with its digest; null without a codec. */
    NativeBridge.Encoded encode(String task, byte[] serialized) {
        if (codec == null) {
            return null;
        }
        byte[] bytes = codec.encode(task, serialized);
        byte[] digest = codec.fingerprint(serialized);
        if (bytes == null || digest == null) {
            throw new IllegalStateException("payload codec " + codec.id() + " returned null for a payload of task "
                    + task + "; a codec must return bytes from encode and fingerprint");
        }
        return new NativeBridge.Encoded(codec.id(), bytes, digest);
    }

    /**
     * The serialized payload of job {@code jobId} of {@code task} from what is stored, which the
     * codec {@code codecId} encoded (null: stored as serialized).
     *
     * @throws PayloadDecodeException if this client has no codec of that id, or the codec cannot
     *     decode the bytes
     */
    byte[] decode(long jobId, String task, byte[] stored, String codecId) {
        if (codecId == null) {
            return stored;
        }
        if (codec == null || !codec.id().equals(codecId)) {
            throw new PayloadDecodeException("the payload of job " + jobId + " (task " + task
                    + ") was stored by payload codec " + codecId + ", and this client "
                    + (codec == null ? "has no codec" : "has codec " + codec.id())
                    + "; set FlexiQ.Builder.payloadCodec to a codec " + codecId + " that holds its key");
        }
        try {
            return codec.decode(task, stored);
        } catch (RuntimeException e) {
            throw new PayloadDecodeException("the payload of job " + jobId + " (task " + task
                    + ") cannot be decoded: " + e.getMessage(), e);
        }
    }
}
