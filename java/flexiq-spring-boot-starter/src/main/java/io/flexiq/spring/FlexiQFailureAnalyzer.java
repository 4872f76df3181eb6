package io.flexiq.spring;

import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;

/**
 * Reports a {@link FlexiQConfigurationException} that failed the start as Spring Boot's
 * "APPLICATION FAILED TO START" report: what is wrong, and what to do, with where the property
 * at fault is set ({@code class path resource [application.properties] - 3:18}, an environment
 * variable, a command-line argument), instead of a stack trace. Registered in
 * {@code META-INF/spring.factories}, which Spring Boot 3.5 and 4 both read.
 */
public final class FlexiQFailureAnalyzer extends AbstractFailureAnalyzer<FlexiQConfigurationException> {
    private final Environment environment;

    /**
     * Created by Spring Boot with the failed application's environment (null when the
     * application failed before it had one), where the property's origin is looked up.
     */
    public FlexiQFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, FlexiQConfigurationException cause) {
        String origin = origin(cause.getProperty());
        String action = origin == null ? cause.getAction()
                : cause.getAction() + " (" + cause.getProperty() + " is set in " + origin + ")";
        return new FailureAnalysis(cause.getDescription() + ".", action + ".", cause);
    }

    /** Where the environment's value of {@code property} comes from, or null if unknown. */
    private String origin(String property) {
        if (property == null || !(environment instanceof ConfigurableEnvironment)) {
            return null;
        }
        ConfigurationPropertyName name = ConfigurationPropertyName.of(property);
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            ConfigurationProperty found = source.getConfigurationProperty(name);
            if (found != null) {
                return found.getOrigin() == null ? null : found.getOrigin().toString();
            }
        }
        return null;
    }
}
