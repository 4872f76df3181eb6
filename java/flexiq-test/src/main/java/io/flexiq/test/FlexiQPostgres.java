package io.flexiq.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.test.context.ContextConfiguration;

/**
 * Gives a {@code @SpringBootTest} a real PostgreSQL with no Docker, through
 * {@link FlexiQPostgresInitializer}: {@code spring.datasource.*} point at this JVM's test server
 * (or the configured existing database), and FlexiQ gets a schema of the context's own.
 * Test classes with the same configuration share one context, as Spring's test support caches
 * them.
 *
 * <pre>{@code
 * @SpringBootTest
 * @FlexiQPostgres
 * class OrdersTest {
 *     @Autowired JobQueue queue;
 *     @Autowired PostgresServer postgres;   // for outage tests
 * }
 * }</pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ContextConfiguration(initializers = FlexiQPostgresInitializer.class)
public @interface FlexiQPostgres {}
