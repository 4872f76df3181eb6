package io.flexiq.test;

import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;

/**
 * Points a Spring application context at a real PostgreSQL for tests, with no Docker: this JVM's
 * {@link PostgresServer} (started on first use, shared by every context and test class, stopped
 * when the JVM ends), or the existing database named by {@code FLEXIQ_TEST_DATABASE_URL} or the
 * system property {@code flexiq.test.database.url}. Usually applied through
 * {@link FlexiQPostgres @FlexiQPostgres}.
 *
 * <p>It sets {@code spring.datasource.url}, {@code spring.datasource.username} and
 * {@code spring.datasource.password} (from which FlexiQ's starter derives its client's URL), and
 * {@code flexiq.schema} to a fresh schema, dropped when the context closes, so that contexts do
 * not see each other's jobs. Properties the test sets itself ({@code @SpringBootTest(properties = …)},
 * {@code @TestPropertySource}) win. The server is a bean of the context, for outage tests
 * ({@link PostgresServer#shutDown()}, then {@link PostgresServer#restart()}); it is absent with
 * an existing database.
 *
 * <p>Needs Spring Framework 6 or later on the test classpath (Spring Boot brings it).
 */
public final class FlexiQPostgresInitializer implements ApplicationContextInitializer<ConfigurableApplicationContext> {
    /** The name of the property source this initializer adds. */
    public static final String PROPERTY_SOURCE = "flexiqTestPostgres";
    /** Spring's name for the properties of {@code @SpringBootTest(properties)} and {@code @TestPropertySource}. */
    private static final String INLINED_TEST_PROPERTIES = "Inlined Test Properties";

    /** Created by Spring, for contexts that list it as an initializer. */
    public FlexiQPostgresInitializer() {}

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        Optional<String> configured = TestDatabase.configuredUrl();
        JdbcTarget jdbc;
        if (configured.isPresent()) {
            jdbc = JdbcTarget.of(configured.get(), "the database URL in " + TestDatabase.URL_VARIABLE + " or "
                    + TestDatabase.URL_PARAMETER);
        } else {
            PostgresServer server = TestDatabase.server();
            jdbc = JdbcTarget.of(server.url(), "the test server's URL");
            context.getBeanFactory().registerSingleton("flexiqTestPostgresServer", server);
        }
        String schema = ClassSchema.freshName();
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("spring.datasource.url", jdbc.url());
        properties.put("spring.datasource.username", jdbc.credentials().getProperty("user", ""));
        properties.put("spring.datasource.password", jdbc.credentials().getProperty("password", ""));
        properties.put("flexiq.schema", schema);
        MutablePropertySources sources = context.getEnvironment().getPropertySources();
        MapPropertySource source = new MapPropertySource(PROPERTY_SOURCE, properties);
        if (sources.contains(INLINED_TEST_PROPERTIES)) {
            sources.addAfter(INLINED_TEST_PROPERTIES, source);
        } else {
            sources.addFirst(source);
        }
        // Registered before any bean of the application, so destroyed after all of them: the
        // schema goes once FlexiQ's client and worker have closed.
        if (context.getBeanFactory() instanceof DefaultSingletonBeanRegistry registry) {
            registry.registerDisposableBean("flexiqTestSchemaDrop", () -> dropQuietly(jdbc, schema));
        }
    }

    private static void dropQuietly(JdbcTarget jdbc, String schema) throws SQLException {
        // The server may be gone already: shut down by an outage test, or stopping with the JVM
        // (its shutdown hook runs beside Spring's); its schemas go with it then.
        try {
            ClassSchema.drop(jdbc, schema);
        } catch (SQLException e) {
            String state = e.getSQLState();
            if (state == null || !(state.startsWith("08") || state.startsWith("57P"))) {
                throw e;
            }
        }
    }
}
