package io.flexiq.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.flexiq.JobQueue;
import io.flexiq.Task;
import io.flexiq.test.FlexiQExtension;
import io.flexiq.test.FlexiQPostgresInitializer;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** With an OpenTelemetry bean, as Spring Boot's tracing gives one, enqueues are traced without code. */
@ExtendWith(FlexiQExtension.class)
class TracingAutoConfigurationTest {
    record Ping(long n) {}

    static final Task<Ping> PING = Task.of("ping", Ping.class);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withInitializer(new FlexiQPostgresInitializer())
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
                    FlexiQAutoConfiguration.class, FlexiQBoot4Configuration.class))
            .withUserConfiguration(Tracing.class);

    @Configuration(proxyBeanMethods = false)
    static class Tracing {
        @Bean
        InMemorySpanExporter exporter() {
            return InMemorySpanExporter.create();
        }

        @Bean(destroyMethod = "close")
        OpenTelemetrySdk openTelemetry(InMemorySpanExporter exporter) {
            return OpenTelemetrySdk.builder()
                    .setTracerProvider(SdkTracerProvider.builder()
                            .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                    .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                    .build();
        }
    }

    @Test
    void enqueuesAreTracedWhenTheApplicationHasAnOpenTelemetryBean() {
        runner.run(context -> {
            assertNull(context.getStartupFailure());
            assertEquals(1, context.getBeanNamesForType(OpenTelemetry.class).length);
            String id = context.getBean(JobQueue.class).enqueue(PING, new Ping(1));
            var spans = context.getBean(InMemorySpanExporter.class).getFinishedSpanItems();
            assertEquals(1, spans.size());
            assertEquals(SpanKind.PRODUCER, spans.get(0).getKind());
            assertEquals(id, spans.get(0).getAttributes()
                    .get(AttributeKey.stringKey("messaging.message.id")));
        });
    }

    @Test
    void tracingTurnsOffByProperty() {
        runner.withPropertyValues("flexiq.tracing.enabled=false").run(context -> {
            context.getBean(JobQueue.class).enqueue(PING, new Ping(2));
            assertEquals(0, context.getBean(InMemorySpanExporter.class).getFinishedSpanItems().size());
        });
    }
}
