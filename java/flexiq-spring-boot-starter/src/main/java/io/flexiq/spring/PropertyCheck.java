package io.flexiq.spring;

import java.util.function.Consumer;

/**
 * Hands a {@code flexiq.*} property's value to the builder that checks it. The builders name
 * their own setters when they refuse a value ({@code poolSize must be at least 1}); a Spring
 * user set a property, so the refusal is told again under the property's name.
 */
final class PropertyCheck {
    private PropertyCheck() {}

    /** Passes {@code value} to {@code setter}; a refusal fails naming {@code property} and the value. */
    static <T> void apply(String property, T value, Consumer<? super T> setter) {
        try {
            setter.accept(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(property + "=" + value + " is refused: " + e.getMessage());
        }
    }
}
