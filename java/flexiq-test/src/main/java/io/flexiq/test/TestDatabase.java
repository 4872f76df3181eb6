package io.flexiq.test;

import java.util.Optional;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Where {@link FlexiQExtension} finds its database: an existing one named by configuration, else
 * this JVM's own {@link PostgresServer}, started on first use and stopped when the JVM ends.
 */
final class TestDatabase {
    /** JUnit configuration parameter (or system property) naming an existing database. */
    static final String URL_PARAMETER = "flexiq.test.database.url";
    /** Environment variable naming an existing database, if the parameter does not. */
    static final String URL_VARIABLE = "FLEXIQ_TEST_DATABASE_URL";

    private static PostgresServer server;
    private static PostgresServerException startFailure;

    private TestDatabase() {}

    /** The URL of an existing database to use instead of a server of our own, if configured. */
    static Optional<String> configuredUrl(ExtensionContext context) {
        Optional<String> url = context.getConfigurationParameter(URL_PARAMETER).filter(s -> !s.isBlank());
        if (url.isPresent()) {
            return url;
        }
        return Optional.ofNullable(System.getenv(URL_VARIABLE)).filter(s -> !s.isBlank());
    }

    /**
     * The URL of an existing database named by the system property or the environment variable,
     * for callers outside JUnit's configuration (Spring's context initializer).
     */
    static Optional<String> configuredUrl() {
        Optional<String> url = Optional.ofNullable(System.getProperty(URL_PARAMETER)).filter(s -> !s.isBlank());
        if (url.isPresent()) {
            return url;
        }
        return Optional.ofNullable(System.getenv(URL_VARIABLE)).filter(s -> !s.isBlank());
    }

    /**
     * This JVM's server, started on first use (fast: without fsync) and closed when the JVM
     * ends. A class that left it shut down does not break the next: it is started again here.
     *
     * @throws PostgresServerException if it could not be started, then on every later call too
     */
    static synchronized PostgresServer server() {
        if (startFailure != null) {
            throw new PostgresServerException("this JVM's PostgreSQL for tests failed to start earlier: "
                    + startFailure.getMessage(), startFailure);
        }
        if (server == null) {
            try {
                server = PostgresServer.builder().durable(false).start();
            } catch (PostgresServerException e) {
                startFailure = e;
                throw e;
            }
            PostgresServer started = server;
            Runtime.getRuntime().addShutdownHook(new Thread(started::close, "flexiq-test-postgres-stop"));
        }
        server.restart();
        return server;
    }
}
