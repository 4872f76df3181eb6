package io.flexiq.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.test.FlexiQExtension;
import io.flexiq.test.FlexiQPostgresInitializer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.logging.LogFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * FlexiQ's startup failures as Spring Boot reports them: the analyzer Boot finds in
 * spring.factories turns them into what is wrong and what to do, with where the property is set.
 */
@ExtendWith(FlexiQExtension.class)
class FlexiQFailureAnalyzerTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withInitializer(new FlexiQPostgresInitializer())
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, FlexiQAutoConfiguration.class,
                    FlexiQBoot4Configuration.class));

    /**
     * The analysis of a startup failure by the analyzers Spring Boot loads, given the failed
     * application's bean factory and environment as Boot gives them: here one whose property
     * source "settings" holds {@code properties} ({@code name=value}).
     */
    private static FailureAnalysis analysis(Throwable failure, String... properties) {
        assertNotNull(failure, "the start failed");
        Map<String, Object> settings = new LinkedHashMap<>();
        for (String property : properties) {
            settings.put(property.substring(0, property.indexOf('=')), property.substring(property.indexOf('=') + 1));
        }
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("settings", settings));
        List<FailureAnalyzer> analyzers = SpringFactoriesLoader.forDefaultResourceLocation(
                        FlexiQFailureAnalyzerTest.class.getClassLoader())
                .load(FailureAnalyzer.class, SpringFactoriesLoader.ArgumentResolver
                        .of(BeanFactory.class, new DefaultListableBeanFactory()).and(Environment.class, environment),
                        // As Spring Boot does: analyzers of what this class path lacks are left out.
                        SpringFactoriesLoader.FailureHandler.logging(LogFactory.getLog(FlexiQFailureAnalyzerTest.class)));
        FailureAnalyzer flexiq = analyzers.stream().filter(FlexiQFailureAnalyzer.class::isInstance).findFirst()
                .orElseThrow(() -> new AssertionError("FlexiQFailureAnalyzer is not in spring.factories"));
        FailureAnalysis analysis = flexiq.analyze(failure);
        assertNotNull(analysis, "FlexiQ's analyzer takes the failure");
        return analysis;
    }

    @Test
    void aRefusedPropertyIsReportedWithItsValueWhereItIsSetAndItsDefault() {
        runner.withPropertyValues("flexiq.pool-size=0").run(context -> {
            FailureAnalysis analysis = analysis(context.getStartupFailure(), "flexiq.pool-size=0");
            assertEquals("flexiq.pool-size=0 is refused: poolSize must be at least 1, got 0.", analysis.getDescription());
            assertEquals("Set flexiq.pool-size to a value that passes this check, or remove it to get the default, 10"
                    + " (flexiq.pool-size is set in \"flexiq.pool-size\" from property source \"settings\").",
                    analysis.getAction());
        });
    }

    @Test
    void aRefusedWorkerPropertyShowsItsDefaultAsWritten() {
        runner.withUserConfiguration(FlexiQAutoConfigurationTest.Handlers.class)
                .withPropertyValues("flexiq.worker.lease=0s").run(context -> {
                    FailureAnalysis analysis = analysis(context.getStartupFailure(), "flexiq.worker.lease=0s");
                    assertTrue(analysis.getDescription().startsWith("flexiq.worker.lease=0s is refused: lease must be"),
                            analysis.getDescription());
                    assertTrue(analysis.getAction().contains("remove it to get the default, 30s ("), analysis.getAction());
                });
    }

    @Test
    void aFailureOfNoOnePropertyIsReportedWithoutAnOrigin() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(FlexiQAutoConfiguration.class))
                .run(context -> {
                    FailureAnalysis analysis = analysis(context.getStartupFailure());
                    assertEquals("no database to connect FlexiQ to.", analysis.getDescription());
                    assertEquals("Set flexiq.url (postgres://user:password@host:port/database) or"
                            + " spring.datasource.url (jdbc:postgresql://host:port/database).", analysis.getAction());
                });
    }

    @Test
    void defaultsAreWrittenAsInApplicationProperties() {
        assertEquals("the default, 10", PropertyCheck.defaultOf("flexiq.pool-size"));
        assertEquals("the default, 5s", PropertyCheck.defaultOf("flexiq.maintenance.interval"));
        assertEquals("the default, 7d", PropertyCheck.defaultOf("flexiq.maintenance.dead-retention"));
        assertEquals("the default, default", PropertyCheck.defaultOf("flexiq.worker.queues"));
        assertEquals("FlexiQ's default", PropertyCheck.defaultOf("flexiq.key-retention"));
    }
}
