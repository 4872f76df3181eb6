package io.flexiq.test;

import io.flexiq.FlexiQ;
import java.sql.SQLException;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension giving each test class a real PostgreSQL and a ready {@link FlexiQ}
 * client. Use it through {@link FlexiQTest @FlexiQTest} or
 * {@code @ExtendWith(FlexiQExtension.class)}.
 *
 * <ul>
 *   <li>A parameter of type {@link FlexiQ}, of a test method, a lifecycle method
 *       ({@code @BeforeAll}, {@code @BeforeEach}, …) or the constructor, receives a client on a
 *       fresh schema of its own, migrated. Every parameter of one test class gets the same
 *       client ({@code @Nested} classes share their enclosing class's). After the class, the
 *       client is closed, which closes its workers, and the schema is dropped.
 *   <li>A parameter of type {@link PostgresServer} receives the server, for JDBC checks
 *       ({@link PostgresServer#jdbcUrl()}) or outage tests ({@link PostgresServer#shutDown()}).
 *       It is this JVM's one server for tests, shared by every class: leave it running.
 * </ul>
 *
 * <p>The server is started when a class first asks for either, without fsync, and stopped when
 * the JVM ends. To use an existing database instead, name it ({@code postgres://user:password@host:port/database})
 * in the environment variable {@code FLEXIQ_TEST_DATABASE_URL} or the JUnit configuration
 * parameter {@code flexiq.test.database.url} (which a system property also sets); classes then
 * get schemas there, and no {@code PostgresServer} can be injected.
 */
public final class FlexiQExtension implements ParameterResolver, AfterAllCallback {
    private static final Namespace NAMESPACE = Namespace.create(FlexiQExtension.class);

    /** Creates the extension; JUnit does, for classes that register it. */
    public FlexiQExtension() {}

    /** Supports parameters of type {@link FlexiQ} and {@link PostgresServer}. */
    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == FlexiQ.class || type == PostgresServer.class;
    }

    /**
     * The test class's client, created and migrated on first request, or this JVM's server.
     *
     * @throws ParameterResolutionException for a {@link PostgresServer} while an existing
     *     database is configured
     */
    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        if (parameter.getParameter().getType() == PostgresServer.class) {
            if (TestDatabase.configuredUrl(context).isPresent()) {
                throw new ParameterResolutionException("no PostgresServer to inject: the tests use the existing "
                        + "database named by " + TestDatabase.URL_VARIABLE + " or " + TestDatabase.URL_PARAMETER
                        + "; ask for a FlexiQ client instead, or unset it");
            }
            return TestDatabase.server();
        }
        ExtensionContext testClass = classContext(context);
        return testClass.getStore(NAMESPACE)
                .getOrComputeIfAbsent(ClassSchema.class, key -> createSchema(testClass), ClassSchema.class)
                .client();
    }

    /**
     * Closes the class's client and drops its schema, if the class asked for one.
     *
     * @throws SQLException if the schema could not be dropped
     */
    @Override
    public void afterAll(ExtensionContext context) throws SQLException {
        ClassSchema schema = context.getStore(NAMESPACE).remove(ClassSchema.class, ClassSchema.class);
        if (schema != null) {
            schema.drop();
        }
    }

    private static ClassSchema createSchema(ExtensionContext context) {
        Optional<String> configured = TestDatabase.configuredUrl(context);
        if (configured.isPresent()) {
            String url = configured.get();
            return ClassSchema.create(url, JdbcTarget.of(url, "the database URL in " + TestDatabase.URL_VARIABLE
                    + " or " + TestDatabase.URL_PARAMETER));
        }
        PostgresServer server = TestDatabase.server();
        return ClassSchema.create(server.url(), JdbcTarget.of(server.url(), "the test server's URL"));
    }

    /** The test class's context, above those of its methods and their invocations. */
    private static ExtensionContext classContext(ExtensionContext context) {
        ExtensionContext current = context;
        while (current.getTestMethod().isPresent() && current.getParent().isPresent()) {
            current = current.getParent().get();
        }
        return current;
    }
}
