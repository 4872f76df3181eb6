package io.flexiq.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a JUnit 5 test class that gets a migrated {@link io.flexiq.FlexiQ} client on a real
 * PostgreSQL, in a schema of its own: the same as {@code @ExtendWith(FlexiQExtension.class)}.
 *
 * <pre>{@code
 * @FlexiQTest
 * class CheckoutTest {
 *     @Test
 *     void placingAnOrderEnqueuesOneCharge(FlexiQ queue) { ... }
 * }
 * }</pre>
 *
 * @see FlexiQExtension
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(FlexiQExtension.class)
public @interface FlexiQTest {}
