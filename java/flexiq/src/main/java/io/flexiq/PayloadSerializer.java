package io.flexiq;

/**
 * Turns payloads into the bytes FlexiQ stores and hashes into auto-derived keys, and back.
 *
 * <p>Auto-derived keys hash exactly what {@link #serialize} returns, so two payloads collide only
 * when they serialize to identical bytes. The default, {@link CanonicalJsonSerializer}, emits RFC
 * 8785 canonical JSON, which every FlexiQ binding emits for the same logical value.
 */
public interface PayloadSerializer {
    /**
     * Serializes a payload.
     *
     * @throws PayloadSerializationException if the payload cannot be serialized
     */
    byte[] serialize(Object payload);

    /**
     * Reads a payload back.
     *
     * @throws PayloadSerializationException if the bytes do not hold a {@code type}
     */
    <T> T deserialize(byte[] bytes, Class<T> type);
}
