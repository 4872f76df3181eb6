package io.flexiq.spring;

import io.flexiq.CanonicalJsonSerializer;
import io.flexiq.PayloadSerializationException;
import io.flexiq.PayloadSerializer;
import java.util.Objects;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamWriteFeature;
import tools.jackson.core.json.JsonWriteFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Payloads as Jackson 3 writes them with the application's {@link JsonMapper} (Spring Boot 4's),
 * so that its modules and settings apply. The auto-configuration puts it under
 * {@link CanonicalJsonSerializer#canonicalizing(PayloadSerializer)}, which rewrites the JSON in
 * canonical form so that derived keys stay stable; test mode takes it as it is:
 *
 * <pre>{@code
 * TestQueue queue = TestQueue.create(new JacksonJsonSerializer(jsonMapper));
 * }</pre>
 *
 * <p>The mapper is rebuilt so that NaN and infinities fail rather than turn into strings, and
 * doubles are written in their shortest form (the canonical form refuses digits a double does
 * not hold).
 */
public final class JacksonJsonSerializer implements PayloadSerializer {
    private final JsonMapper mapper;

    /** A serializer over a copy of {@code mapper}. */
    public JacksonJsonSerializer(JsonMapper mapper) {
        this.mapper = Objects.requireNonNull(mapper, "mapper").rebuild()
                .disable(JsonWriteFeature.WRITE_NAN_AS_STRINGS)
                .enable(StreamWriteFeature.USE_FAST_DOUBLE_WRITER)
                .build();
    }

    @Override
    public byte[] serialize(Object payload) {
        try {
            return mapper.writeValueAsBytes(payload);
        } catch (JacksonException e) {
            throw new PayloadSerializationException("payload of type "
                    + (payload == null ? "null" : payload.getClass().getName()) + " does not serialize to JSON: "
                    + e.getOriginalMessage(), e);
        }
    }

    @Override
    public <T> T deserialize(byte[] bytes, Class<T> type) {
        try {
            return mapper.readValue(bytes, type);
        } catch (JacksonException e) {
            throw new PayloadSerializationException("stored payload does not read as " + type.getName() + ": "
                    + e.getOriginalMessage(), e);
        }
    }
}
