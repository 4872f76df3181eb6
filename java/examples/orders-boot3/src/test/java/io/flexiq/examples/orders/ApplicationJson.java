package io.flexiq.examples.orders;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flexiq.CanonicalJsonSerializer;
import io.flexiq.PayloadSerializer;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration;
import org.springframework.boot.test.context.ConfigDataApplicationContextInitializer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The application's JSON on Spring Boot 3.5: Jackson 2's {@link ObjectMapper} as Boot configures
 * it from application.properties, in the serializer FlexiQ's starter makes of it (which puts the
 * JSON in canonical form with the native library).
 */
final class ApplicationJson {
    private ApplicationJson() {}

    static PayloadSerializer serializer() {
        AtomicReference<ObjectMapper> mapper = new AtomicReference<>();
        new ApplicationContextRunner()
                .withInitializer(new ConfigDataApplicationContextInitializer())
                .withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class))
                .run(context -> mapper.set(context.getBean(ObjectMapper.class)));
        return new CanonicalJsonSerializer(mapper.get());
    }
}
