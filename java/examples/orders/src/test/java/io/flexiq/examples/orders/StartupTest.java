package io.flexiq.examples.orders;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.test.FlexiQExtension;
import io.flexiq.test.PostgresServer;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Starting the service: FlexiQ's gauge of jobs has its values as soon as the service is up, and a
 * {@code flexiq.*} value out of range stops the start with Spring Boot's failure report, which
 * names the property, its value, where it is set and what to do, instead of a stack trace.
 */
@ExtendWith({FlexiQExtension.class, OutputCaptureExtension.class})
class StartupTest {
    @Test
    void theJobsGaugeHasItsValuesAsSoonAsTheServiceIsUp(PostgresServer postgres) {
        String schema = "orders_start_" + UUID.randomUUID().toString().substring(0, 8);
        // Two charges due tomorrow, waiting before the service starts.
        try (FlexiQ client = FlexiQ.builder(postgres.url()).schema(schema).migrate(true).build()) {
            for (int i = 0; i < 2; i++) {
                client.enqueue(Charge.TASK, new Charge("order-" + i, 100, Instant.EPOCH),
                        EnqueueOptions.builder().delay(Duration.ofDays(1)).build());
            }
        }
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(OrdersApplication.class).run(
                "--server.port=0", "--spring.datasource.url=" + postgres.jdbcUrl(), "--flexiq.schema=" + schema)) {
            // At once: the gauge is read when it is bound, not at its first refresh 30 s later.
            MeterRegistry registry = app.getBean(MeterRegistry.class);
            assertEquals(2.0, registry.get("flexiq.jobs").tags("queue", "default", "state", "scheduled").gauge().value());
            assertEquals(0.0, registry.get("flexiq.jobs").tags("queue", "default", "state", "available").gauge().value());
            app.getBean(FlexiQ.class).dropSchema();
        }
    }

    @Test
    void aPropertyOutOfRangeStopsTheStartWithBootsReportOfWhatToSet(PostgresServer postgres, CapturedOutput output) {
        SpringApplicationBuilder app = new SpringApplicationBuilder(OrdersApplication.class);
        assertThrows(RuntimeException.class, () -> app.run("--server.port=0",
                "--spring.datasource.url=" + postgres.jdbcUrl(), "--flexiq.pool-size=0"));
        String report = output.getAll();
        assertTrue(report.contains("APPLICATION FAILED TO START"), report);
        assertTrue(report.contains("flexiq.pool-size=0 is refused: poolSize must be at least 1, got 0."), report);
        // Where the value comes from, as Spring Boot names the property source.
        assertTrue(report.contains("Set flexiq.pool-size to a value that passes this check, or remove it to get the"
                + " default, 10 (flexiq.pool-size is set in \"flexiq.pool-size\" from property source"
                + " \"commandLineArgs\")."), report);
        assertFalse(report.contains("\tat io.flexiq"), "no stack trace: " + report);
    }
}
