package io.flexiq.spring;

/**
 * The application's FlexiQ settings cannot be used: a {@code flexiq.*} value FlexiQ refuses, a
 * {@code spring.datasource.*} that FlexiQ cannot reach PostgreSQL through, or no database at
 * all. It fails the start; Spring Boot reports it through {@link FlexiQFailureAnalyzer} as what
 * is wrong ({@link #getDescription()}) and what to do ({@link #getAction()}), without the stack
 * trace. The message holds both.
 */
public final class FlexiQConfigurationException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String description;
    private final String action;
    /** The property at fault, whose origin the failure report adds; null when no one property is. */
    private final String property;

    FlexiQConfigurationException(String description, String action, String property, Throwable cause) {
        super(description + ". " + action, cause);
        this.description = description;
        this.action = action;
        this.property = property;
    }

    /** What is wrong, naming the property and its value (never a password or a key). */
    public String getDescription() {
        return description;
    }

    /** What to set, or to change, to fix it. */
    public String getAction() {
        return action;
    }

    /** The property at fault ({@code flexiq.pool-size}), or null when the fault is no one property's. */
    public String getProperty() {
        return property;
    }
}
