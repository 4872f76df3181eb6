package io.flexiq.examples.orders;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.FlexiQ;
import io.flexiq.JobInfo;
import io.flexiq.JobState;
import io.flexiq.test.FlexiQExtension;
import io.flexiq.test.PostgresServer;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.context.event.ContextClosedEvent;

/**
 * Stopping the application while a handler runs (documented on FlexiQWorkerLifecycle): a handler
 * that finishes within {@code flexiq.worker.shutdown-timeout} completes its job; one still running
 * then is interrupted and its job given back, not counted as an attempt, and the next start runs it.
 */
@ExtendWith(FlexiQExtension.class)
class GracefulShutdownTest {
    /** Holds the charge until the application starts closing, or until interrupted. */
    static final class HeldPayments {
        static final CountDownLatch STARTED = new CountDownLatch(1);
        static volatile CountDownLatch release = new CountDownLatch(1);
        static final AtomicBoolean INTERRUPTED = new AtomicBoolean();
        static volatile boolean releaseOnClose;

        @Bean
        @Primary
        PaymentGateway heldPayments() {
            return (orderId, amountCents, key) -> {
                STARTED.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    INTERRUPTED.set(true);
                    throw e;
                }
                return "held-" + key;
            };
        }

        @Bean
        ApplicationListener<ContextClosedEvent> releaseOnClose() {
            return event -> {
                if (releaseOnClose) {
                    release.countDown();
                }
            };
        }
    }

    @Test
    void aHandlerRunningAtShutdownFinishesWithinTheTimeoutOrItsJobIsGivenBack(PostgresServer postgres)
            throws Exception {
        String schema = "orders_shutdown_" + UUID.randomUUID().toString().substring(0, 8);
        // 1. The handler finishes during shutdown (released when the context starts closing).
        HeldPayments.releaseOnClose = true;
        String finished = placeAndClose(postgres, schema, "30s");
        // 2. The handler outlives the shutdown timeout: interrupted, its job given back.
        HeldPayments.releaseOnClose = false;
        HeldPayments.release = new CountDownLatch(1);
        String givenBack;
        try (FlexiQ client = FlexiQ.builder(postgres.url()).schema(schema).build()) {
            assertEquals(JobState.COMPLETED, client.getJob(finished).orElseThrow().state());
            givenBack = placeAndCloseHeld(postgres, schema);
            JobInfo job = client.getJob(givenBack).orElseThrow();
            assertTrue(HeldPayments.INTERRUPTED.get());
            assertEquals(JobState.AVAILABLE, job.state(), job.toString());
            assertEquals(0, job.attempt(), job.toString());
        }
        // 3. The next start runs the job that was given back.
        try (ConfigurableApplicationContext app = start(postgres, schema, "30s")) {
            FlexiQ client = app.getBean(FlexiQ.class);
            OrdersApiTest.await("the given-back job completes after a restart",
                    () -> client.getJob(givenBack).map(j -> j.state() == JobState.COMPLETED).orElse(false));
            client.dropSchema();
        }
    }

    private static String placeAndClose(PostgresServer postgres, String schema, String timeout) throws Exception {
        try (ConfigurableApplicationContext app = start(postgres, schema, timeout, HeldPayments.class)) {
            String jobId = app.getBean(OrderService.class).placeOrder("order-" + UUID.randomUUID(), 100);
            assertTrue(HeldPayments.STARTED.await(60, TimeUnit.SECONDS), "the handler did not start");
            return jobId;
        }
    }

    private static String placeAndCloseHeld(PostgresServer postgres, String schema) throws Exception {
        try (ConfigurableApplicationContext app = start(postgres, schema, "300ms", HeldPayments.class)) {
            String jobId = app.getBean(OrderService.class).placeOrder("order-" + UUID.randomUUID(), 200);
            OrdersApiTest.await("the held handler runs", () -> app.getBean(FlexiQ.class).getJob(jobId)
                    .map(j -> j.state() == JobState.RUNNING).orElse(false));
            return jobId;
        }
    }

    private static ConfigurableApplicationContext start(PostgresServer postgres, String schema, String timeout,
            Class<?>... extra) {
        Class<?>[] sources = new Class<?>[extra.length + 1];
        sources[0] = OrdersApplication.class;
        System.arraycopy(extra, 0, sources, 1, extra.length);
        // As command-line arguments, which win over application.properties.
        return new SpringApplicationBuilder(sources).run(
                "--server.port=0",
                "--spring.datasource.url=" + postgres.jdbcUrl(),
                "--flexiq.schema=" + schema,
                "--flexiq.worker.poll-interval=200ms",
                "--flexiq.worker.shutdown-timeout=" + timeout);
    }
}
