package io.flexiq;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamWriteFeature;
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
 * <p>A handler receives exactly the payload that was enqueued, so what canonical JSON cannot
 * hold is refused with a {@link PayloadSerializationException} naming its JSON path
 * ({@code $.order.amount}), never rounded:
 * <ul>
 *   <li>integers beyond 2^53 (9007199254740992) in magnitude, such as most {@code long} ids:
 *       canonical JSON's numbers are IEEE 754 doubles. Doubles from 2^53 up to 10^21 count as
 *       such integers (canonical JSON writes them without a point); from 10^21 on they pass.
 *       Carry them as strings;
 *   <li>decimals a double does not hold to the digits given, such as a {@code BigDecimal} of 25
 *       significant digits. Carry them as strings;
 *   <li>NaN and infinities, which JSON does not have;
 *   <li>strings and map keys holding an unpaired UTF-16 surrogate;
 *   <li>nesting deeper than 128 arrays and objects.
 * </ul>
 * Every other {@code double} and every {@code float} passes, except eight subnormal doubles
 * (below 10^-322) whose shortest Java and JavaScript digits differ.
 */
public final class CanonicalJsonSerializer implements PayloadSerializer {
    private final ObjectMapper mapper;
    private final boolean canonical;

    /** A serializer over a default Jackson mapper. */
    public CanonicalJsonSerializer() {
        this(JsonMapper.builder().build());
    }

    /**
     * The same Jackson mapping without the native rewrite to canonical form, for {@link TestQueue}:
     * it computes no keys, so it runs where no native library loads.
     */
    static CanonicalJsonSerializer withoutNativeCore() {
        return new CanonicalJsonSerializer(JsonMapper.builder().build(), false);
    }

    /**
     * A serializer over the caller's Jackson mapper (for its modules and naming rules). The
     * mapper is copied so that NaN and infinities can be refused rather than written as strings,
     * and so that doubles are written in their shortest form: the native core refuses a number
     * whose digits a double does not hold, and Java 17's {@code Double.toString} writes some
     * doubles with a digit too many (1e23 as {@code 9.999999999999999E22}).
     */
    public CanonicalJsonSerializer(ObjectMapper mapper) {
        this(mapper, true);
    }

    private CanonicalJsonSerializer(ObjectMapper mapper, boolean canonical) {
        this.canonical = canonical;
        this.mapper = mapper.copy();
        this.mapper.getFactory().configure(JsonWriteFeature.WRITE_NAN_AS_STRINGS.mappedFeature(), false);
        this.mapper.getFactory().configure(StreamWriteFeature.USE_FAST_DOUBLE_WRITER.mappedFeature(), true);
    }

    @Override
    public byte[] serialize(Object payload) {
        byte[] json = json(payload);
        return canonical ? NativeBridge.canonicalJson(json) : json;
    }

    /**
     * The payload as JSON that an enqueue may hand to the native core to put in canonical form
     * there, in the same call (see {@link EnqueueBatch}); null when this serializer does not
     * canonicalize, so that the caller serializes as usual.
     */
    byte[] jsonForNativeCanonicalForm(Object payload) {
        return canonical ? json(payload) : null;
    }

    private byte[] json(Object payload) {
        try {
            return mapper.writeValueAsBytes(payload);
        } catch (JsonProcessingException e) {
            throw new PayloadSerializationException(
                    "payload of type " + typeName(payload) + " does not serialize to JSON: "
                            + e.getOriginalMessage(), e);
        }
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
