package io.flexiq.spring;

import java.time.Duration;
import java.util.Collection;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.springframework.beans.BeanWrapperImpl;

/**
 * Hands a {@code flexiq.*} property's value to the builder that checks it. The builders name
 * their own setters when they refuse a value ({@code poolSize must be at least 1}); a Spring
 * user set a property, so the refusal is told again under the property's name, with its default.
 */
final class PropertyCheck {
    private static final String PREFIX = "flexiq.";

    private PropertyCheck() {}

    /**
     * Passes {@code value} to {@code setter}.
     *
     * @throws FlexiQConfigurationException if the setter refuses it: names {@code property}, the
     *     value, the builder's reason and the default. The reason stands alone, without the
     *     builder's exception as a cause, so that it is the root of the startup failure.
     */
    static <T> void apply(String property, T value, Consumer<? super T> setter) {
        try {
            setter.accept(value);
        } catch (IllegalArgumentException e) {
            // A URL's password stays out of the report.
            String shown = text(value).replaceFirst("^([a-z]+://[^:/@]*:)[^@/]*@", "$1***@");
            throw new FlexiQConfigurationException(property + "=" + shown + " is refused: " + e.getMessage(),
                    "Set " + property + " to a value that passes this check, or remove it to get " + defaultOf(property),
                    property, null);
        }
    }

    /** "the default, 10", read from a {@link FlexiQProperties} as created. */
    static String defaultOf(String property) {
        if (!property.startsWith(PREFIX)) {
            throw new IllegalArgumentException(property + " is not a flexiq.* property");
        }
        StringBuilder path = new StringBuilder();
        boolean upper = false;
        for (char c : property.substring(PREFIX.length()).toCharArray()) {
            if (c == '-') {
                upper = true;
            } else {
                path.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        Object value = new BeanWrapperImpl(new FlexiQProperties()).getPropertyValue(path.toString());
        return value == null ? "FlexiQ's default" : "the default, " + text(value);
    }

    /** A value as one would write it in application.properties: 30s, not PT30S; a,b for a list. */
    private static String text(Object value) {
        if (value instanceof Duration duration) {
            return duration(duration);
        }
        if (value instanceof Collection<?> values) {
            return values.stream().map(String::valueOf).collect(Collectors.joining(","));
        }
        return String.valueOf(value);
    }

    private static String duration(Duration duration) {
        if (duration.isNegative() || duration.getNano() % 1_000_000 != 0) {
            return duration.toString();
        }
        long millis = duration.toMillis();
        long[] sizes = {86_400_000, 3_600_000, 60_000, 1_000};
        String[] units = {"d", "h", "m", "s"};
        for (int i = 0; i < sizes.length && millis != 0; i++) {
            if (millis % sizes[i] == 0) {
                return millis / sizes[i] + units[i];
            }
        }
        return millis == 0 ? "0s" : millis + "ms";
    }
}
