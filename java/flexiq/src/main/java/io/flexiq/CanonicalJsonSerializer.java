package io.flexiq;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.flexiq.internal.NativeBridge;
import io.flexiq.internal.enqueue.EnqueueBatch;
import java.io.IOException;
import java.util.Objects;

/**
 * The default {@link PayloadSerializer}: Jackson maps the payload to JSON, and FlexiQ's native
 * core rewrites that JSON in RFC 8785 canonical form (sorted members, no insignificant
 * whitespace, ECMAScript number form), the form every binding produces for the same value.
 *
 * <p>A handler receives exactly the payload that was enqueued, so what canonical JSON cannot
 * hold is refused with a {@link PayloadSerializationException} naming its JSON path
 * ({@code $.order.amount}), never rounded:
 * <ul>
 *   <li>{@code Instant}s, {@code OffsetDateTime}s, {@code ZonedDateTime}s and {@code Duration}s
 *       that a caller's mapper writes as numbers ({@code SerializationFeature.WRITE_DATES_AS_TIMESTAMPS},
 *       on in a plain {@code ObjectMapper}, or {@code WRITE_DURATIONS_AS_TIMESTAMPS}): disable
 *       those features to write them as ISO-8601 strings, as the default mapper does;
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
    /** Writes and reads the JSON before its rewrite to canonical form. */
    private final PayloadSerializer json;
    private final boolean canonical;

    /**
     * A serializer over a default Jackson mapper that also maps {@code java.time} values, as
     * ISO-8601 strings exact to the nanosecond ({@code "2026-11-30T23:14:10.123456789Z"}; an
     * {@code OffsetDateTime} keeps its offset), and {@code Optional}s, as their value or null.
     */
    public CanonicalJsonSerializer() {
        this(defaultMapper());
    }

    /**
     * The same Jackson mapping without the native rewrite to canonical form, for {@link TestQueue}:
     * it computes no keys, so it runs where no native library loads.
     */
    static CanonicalJsonSerializer withoutNativeCore() {
        return new CanonicalJsonSerializer(defaultMapper(), false);
    }

    private static ObjectMapper defaultMapper() {
        return JsonMapper.builder()
                .addModule(new JavaTimeModule())
                .addModule(new Jdk8Module())
                // Numbers would lose an Instant's nanoseconds in the double that canonical JSON keeps.
                .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
                .disable(SerializationFeature.WRITE_DURATIONS_AS_TIMESTAMPS)
                // A payload reads back as it was written, not moved to UTC.
                .disable(DeserializationFeature.ADJUST_DATES_TO_CONTEXT_TIME_ZONE)
                // Members in the order canonical form has them, so that the native core finds
                // a bean's or record's JSON canonical as written and need not rewrite it.
                .enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
                .build();
    }

    /**
     * A serializer over the caller's Jackson mapper (for its modules and naming rules). The
     * mapper is copied so that NaN and infinities can be refused rather than written as strings,
     * so that doubles are written in their shortest form (the native core refuses a number whose
     * digits a double does not hold, and Java 17's {@code Double.toString} writes some doubles
     * with a digit too many: 1e23 as {@code 9.999999999999999E22}), and so that {@code java.time}
     * values it would write as numbers are refused naming the feature to disable.
     */
    public CanonicalJsonSerializer(ObjectMapper mapper) {
        this(mapper, true);
    }

    private CanonicalJsonSerializer(ObjectMapper mapper, boolean canonical) {
        this(new JacksonJson(mapper), canonical);
    }

    private CanonicalJsonSerializer(PayloadSerializer json, boolean canonical) {
        this.json = json;
        this.canonical = canonical;
    }

    /**
     * A serializer whose JSON comes from another mapper ({@code json}: Jackson 3's
     * {@code JsonMapper}, as Spring Boot 4 configures it, or any other), rewritten in canonical
     * form by the native core, with the same refusals as the default. Payloads are read back by
     * {@code json}. The mapper must write JSON text in UTF-8.
     */
    public static CanonicalJsonSerializer canonicalizing(PayloadSerializer json) {
        return new CanonicalJsonSerializer(Objects.requireNonNull(json, "json"), true);
    }

    @Override
    public byte[] serialize(Object payload) {
        byte[] bytes = json.serialize(payload);
        return canonical ? NativeBridge.canonicalJson(bytes) : bytes;
    }

    /**
     * The payload as JSON that an enqueue may hand to the native core to put in canonical form
     * there, in the same call (see {@link EnqueueBatch}); null when this serializer does not
     * canonicalize, so that the caller serializes as usual.
     */
    byte[] jsonForNativeCanonicalForm(Object payload) {
        return canonical ? json.serialize(payload) : null;
    }

    @Override
    public <T> T deserialize(byte[] bytes, Class<T> type) {
        return json.deserialize(bytes, type);
    }

    /** Jackson 2's mapping, before the rewrite to canonical form. */
    private static final class JacksonJson implements PayloadSerializer {
        private final ObjectMapper mapper;

        JacksonJson(ObjectMapper mapper) {
            this.mapper = mapper.copy();
            this.mapper.getFactory().configure(JsonWriteFeature.WRITE_NAN_AS_STRINGS.mappedFeature(), false);
            this.mapper.getFactory().configure(StreamWriteFeature.USE_FAST_DOUBLE_WRITER.mappedFeature(), true);
            this.mapper.registerModule(TimeAsNumberRefusal.module());
        }

        @Override
        public byte[] serialize(Object payload) {
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
}
