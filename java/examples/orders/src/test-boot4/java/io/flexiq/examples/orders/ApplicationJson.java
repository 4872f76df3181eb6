package io.flexiq.examples.orders;

import io.flexiq.PayloadSerializer;
import io.flexiq.spring.JacksonJsonSerializer;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.ConfigDataApplicationContextInitializer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import tools.jackson.databind.json.JsonMapper;

/**
 * The application's JSON on Spring Boot 4: Jackson 3's {@link JsonMapper} as Boot configures it
 * from application.properties, in FlexiQ's serializer for test mode (no native library). The
 * Spring Boot 3.5 build of this example (java/examples/orders-boot3) has its own.
 */
final class ApplicationJson {
    private ApplicationJson() {}

    static PayloadSerializer serializer() {
        AtomicReference<JsonMapper> mapper = new AtomicReference<>();
        new ApplicationContextRunner()
                .withInitializer(new ConfigDataApplicationContextInitializer())
                .withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class))
                .run(context -> mapper.set(context.getBean(JsonMapper.class)));
        return new JacksonJsonSerializer(mapper.get());
    }
}
