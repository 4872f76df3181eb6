package io.flexiq.internal.enqueue;

import io.flexiq.PayloadCodec;
import io.flexiq.PayloadDecodeException;
import io.flexiq.internal.NativeBridge;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How a client's payloads are stored: through its {@link PayloadCodec}, if it has one. Encodes
 * serialized payloads on their way in and decodes stored ones on their way out, each by the codec
 * whose id it was stored with, naming the job whose payload cannot be decoded.
 */
public final class StoredPayloads {
    /** The client's codec, or null: payloads are stored as serialized. */
    private final PayloadCodec codec;
    /** Every codec the client decodes with, by id: its own and those it only decodes with. */
    private final Map<String, PayloadCodec> decoders = new LinkedHashMap<>();

    /** Payloads through {@code codec} (null: as serialized), also decoding with {@code decodeOnly}. */
    public StoredPayloads(PayloadCodec codec, Collection<PayloadCodec> decodeOnly) {
        this.codec = codec;
        decodeOnly.forEach(c -> decoders.put(c.id(), c));
        if (codec != null) {
            decoders.put(codec.id(), codec);
        }
    }

    /** Whether payloads are encoded before they are stored. */
    public boolean encodes() {
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
    public byte[] decode(long jobId, String task, byte[] stored, String codecId) {
        if (codecId == null) {
            return stored;
        }
        PayloadCodec decoder = decoders.get(codecId);
        if (decoder == null) {
            throw new PayloadDecodeException("the payload of job " + jobId + " (task " + task
                    + ") was stored by payload codec " + codecId + ", and this client "
                    + (decoders.isEmpty() ? "has no codec" : "decodes only with " + String.join(", ", decoders.keySet()))
                    + "; give the client a codec " + codecId + " that holds its key (FlexiQ.Builder.payloadCodec,"
                    + " or decodePayloadsWith if it no longer encodes)");
        }
        try {
            return decoder.decode(task, stored);
        } catch (RuntimeException e) {
            throw new PayloadDecodeException("the payload of job " + jobId + " (task " + task
                    + ") cannot be decoded: " + e.getMessage(), e);
        }
    }
}
