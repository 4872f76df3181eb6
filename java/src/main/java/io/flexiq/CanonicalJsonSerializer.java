package io.flexiq;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.flexiq.internal.NativeBridge;
import java.io.IOException;

/**
 * The default {@link PayloadSerializer}: Jackson maps the payload to JSON, and FlexiQ's native
 * core rewrites that JSON in RFC 8785 canonical form (sorted members, no insignificant
 * whitespace, ECMAScript number form), the form every binding produces for the same value.
 *
 * <p>Numbers become IEEE 754 doubles in canonical JSON: integers beyond 2^53 lose precision, as
 * they do in JavaScript. Carry such values (and exact decimals) as strings. NaN and infinities
 * have no JSON form and are refused.
 */
public final class CanonicalJsonSerializer implements PayloadSerializer {
    private final ObjectMapper mapper;

    /** A serializer over a default Jackson mapper. */
    public CanonicalJsonSerializer() {
        this(JsonMapper.builder().build());
    }

    /**
     * A serializer over the caller's Jackson mapper (for its modules and naming rules). The
     * mapper is copied so that NaN and infinities can be refused rather than written as strings.
     */
    public CanonicalJsonSerializer(ObjectMapper mapper) {
        this.mapper = mapper.copy();
        this.mapper.getFactory().configure(JsonWriteFeature.WRITE_NAN_AS_STRINGS.mappedFeature(), false);
    }

    @Override
    public byte[] serialize(Object payload) {
        byte[] json;
        try {
            json = mapper.writeValueAsBytes(payload);
        } catch (JsonProcessingException e) {
            throw new PayloadSerializationException(
                    "payload of type " + typeName(payload) + " does not serialize to JSON: "
                            + e.getOriginalMessage(), e);
        }
        return NativeBridge.canonicalJson(json);
    }

    @Override
    public <T> T deserialize(byte[] bytes, Class<T> type) {
        try {
            return mapper.readValue(bytes, type);
        } catch (IOException e) {
            throw new PayloadSerializationException(
                    "stored payload does not read as " + type.getName() + ": " + e.getMessage(), e);
        }
    }

    private static String typeName(Object payload) {
        return payload == null ? "null" : payload.getClass().getName();
    }
}
