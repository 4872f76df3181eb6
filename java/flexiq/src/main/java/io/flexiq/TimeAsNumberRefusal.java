package io.flexiq;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.BeanProperty;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.Module;
import com.fasterxml.jackson.databind.SerializationConfig;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.BeanSerializerModifier;
import com.fasterxml.jackson.databind.ser.ContextualSerializer;
import com.fasterxml.jackson.databind.util.TokenBuffer;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.util.Set;

/**
 * Refuses the {@code java.time} values that carry nanoseconds ({@link Instant},
 * {@link OffsetDateTime}, {@link ZonedDateTime}, {@link Duration}) when a Jackson mapper writes
 * them as numbers, as it does with {@code SerializationFeature.WRITE_DATES_AS_TIMESTAMPS} (on in
 * a plain {@code ObjectMapper}) or {@code WRITE_DURATIONS_AS_TIMESTAMPS}. Such a number is
 * seconds with nine decimals, which canonical JSON's doubles hold only for some values: the same
 * payload with {@code Instant.now()} would pass or be refused by the clock's chance, or, as
 * milliseconds, reach the handler without its nanoseconds. The refusal names the feature and the
 * value's JSON path, at every call.
 */
final class TimeAsNumberRefusal {
    private static final Set<Class<?>> WITH_NANOSECONDS = Set.of(Instant.class, OffsetDateTime.class,
            ZonedDateTime.class, Duration.class);

    private TimeAsNumberRefusal() {}

    /** The Jackson module that wraps the serializers of those types. */
    static Module module() {
        SimpleModule module = new SimpleModule(TimeAsNumberRefusal.class.getName());
        module.setSerializerModifier(new BeanSerializerModifier() {
            @Override
            public JsonSerializer<?> modifySerializer(SerializationConfig config, BeanDescription description,
                    JsonSerializer<?> serializer) {
                return WITH_NANOSECONDS.contains(description.getBeanClass())
                        ? new Refusing(serializer, description.getBeanClass()) : serializer;
            }
        });
        return module;
    }

    /** Writes the value through its own serializer into a buffer, and refuses it if that made a number. */
    private static final class Refusing extends JsonSerializer<Object> implements ContextualSerializer {
        private final JsonSerializer<Object> serializer;
        private final Class<?> type;

        @SuppressWarnings("unchecked")
        Refusing(JsonSerializer<?> serializer, Class<?> type) {
            this.serializer = (JsonSerializer<Object>) serializer;
            this.type = type;
        }

        @Override
        public JsonSerializer<?> createContextual(SerializerProvider provider, BeanProperty property)
                throws JsonMappingException {
            // A property's @JsonFormat may change the shape: check what the contextual one writes.
            JsonSerializer<?> contextual = serializer instanceof ContextualSerializer c
                    ? c.createContextual(provider, property) : serializer;
            return contextual == serializer ? this : new Refusing(contextual, type);
        }

        @Override
        public void serialize(Object value, JsonGenerator gen, SerializerProvider provider) throws IOException {
            TokenBuffer written = provider.bufferForValueConversion(gen.getCodec());
            serializer.serialize(value, written, provider);
            if (written.firstToken() != null && written.firstToken().isNumeric()) {
                String feature = type == Duration.class ? "WRITE_DURATIONS_AS_TIMESTAMPS" : "WRITE_DATES_AS_TIMESTAMPS";
                throw JsonMappingException.from(gen, "the " + type.getName() + " at " + path(gen)
                        + " would be written as the number " + number(written)
                        + ", as this ObjectMapper's SerializationFeature." + feature + " asks (on in a plain "
                        + "ObjectMapper); canonical JSON's doubles hold a number of seconds to the nanosecond "
                        + "only for some values, so such payloads pass or fail by the clock's chance: call "
                        + "mapper.disable(SerializationFeature." + feature + ") to write java.time values as "
                        + "ISO-8601 strings, exact to the nanosecond, as FlexiQ's default serializer does");
            }
            written.serialize(gen);
        }

        @Override
        public boolean isEmpty(SerializerProvider provider, Object value) {
            return serializer.isEmpty(provider, value);
        }

        @Override
        public Class<Object> handledType() {
            return serializer.handledType();
        }
    }

    /** The number a buffer holds first, as JSON has it. */
    private static String number(TokenBuffer written) throws IOException {
        try (JsonParser parser = written.asParser()) {
            parser.nextToken();
            Number number = parser.getNumberValue();
            return number instanceof BigDecimal decimal ? decimal.toPlainString() : number.toString();
        }
    }

    /** The JSON path of the value about to be written, as the native core's refusals name it ({@code $.order.at}). */
    private static String path(JsonGenerator gen) {
        StringBuilder path = new StringBuilder();
        boolean innermost = true;
        for (JsonStreamContext c = gen.getOutputContext(); c != null && !c.inRoot(); c = c.getParent()) {
            if (c.inObject()) {
                path.insert(0, "." + c.getCurrentName());
            } else {
                // The innermost array has not counted the value about to be written yet.
                path.insert(0, "[" + (innermost ? c.getEntryCount() : c.getCurrentIndex()) + "]");
            }
            innermost = false;
        }
        return "$" + path;
    }
}
