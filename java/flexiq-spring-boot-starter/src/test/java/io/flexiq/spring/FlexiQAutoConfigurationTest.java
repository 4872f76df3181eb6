package io.flexiq.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.flexiq.EnqueueEvent;
import io.flexiq.EnqueueOptions;
import io.flexiq.EnqueueOutcome;
import io.flexiq.EnqueueResult;
import io.flexiq.FlexiQ;
import io.flexiq.FlexiQListener;
import io.flexiq.JobContext;
import io.flexiq.JobQueue;
import io.flexiq.Maintenance;
import io.flexiq.PasswordSupplier;
import io.flexiq.PausedQueue;
import io.flexiq.PayloadSerializer;
import io.flexiq.Task;
import io.flexiq.TestQueue;
import io.flexiq.Worker;
import io.flexiq.micrometer.FlexiQMetrics;
import io.flexiq.test.FlexiQExtension;
import io.flexiq.test.FlexiQPostgresInitializer;
import io.flexiq.test.PostgresServer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcConnectionDetails;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * The auto-configuration against a real PostgreSQL: this JVM's test server, through the same
 * initializer that {@code @FlexiQPostgres} applies.
 */
@ExtendWith(FlexiQExtension.class)
class FlexiQAutoConfigurationTest {
    record Charge(long orderId, long amountCents, Instant at) {}

    static final Task<Charge> CHARGE = Task.of("charge", Charge.class);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withInitializer(new FlexiQPostgresInitializer())
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
                    JacksonAutoConfiguration.class, FlexiQAutoConfiguration.class, FlexiQBoot4Configuration.class));

    /** Without the test database: for what happens with other data sources. */
    private final ApplicationContextRunner bare = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FlexiQAutoConfiguration.class, FlexiQBoot4Configuration.class));

    @Test
    void connectsToTheDataSourcesDatabaseMigratedInItsSchema() {
        runner.run(context -> {
            assertNull(context.getStartupFailure());
            FlexiQ client = context.getBean(FlexiQ.class);
            assertEquals(context.getEnvironment().getProperty("flexiq.schema"), client.schema());
            JobQueue queue = context.getBean(JobQueue.class);
            assertInstanceOf(TransactionalJobQueue.class, queue);
            String id = queue.enqueue(CHARGE, new Charge(1, 100, Instant.EPOCH));
            assertTrue(client.getJob(id).isPresent());
        });
    }

    @Test
    void eachContextGetsASchemaOfItsOwnDroppedWhenItCloses(PostgresServer server) throws Exception {
        String[] schemas = new String[2];
        runner.run(first -> runner.run(second -> {
            schemas[0] = first.getBean(FlexiQ.class).schema();
            schemas[1] = second.getBean(FlexiQ.class).schema();
        }));
        assertFalse(schemas[0].equals(schemas[1]));
        try (Connection connection = DriverManager.getConnection(server.jdbcUrl());
                PreparedStatement statement = connection.prepareStatement(
                        "SELECT count(*) FROM pg_namespace WHERE nspname IN (?, ?)")) {
            statement.setString(1, schemas[0]);
            statement.setString(2, schemas[1]);
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                assertEquals(0, rows.getInt(1));
            }
        }
    }

    @Test
    void anEnqueueInASpringTransactionCommitsAndRollsBackWithIt() {
        runner.run(context -> {
            FlexiQ client = context.getBean(FlexiQ.class);
            JobQueue queue = context.getBean(JobQueue.class);
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
            TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
            String schema = client.schema();
            jdbc.execute("CREATE TABLE \"" + schema + "\".orders (id bigint PRIMARY KEY)");

            String rolledBack = tx.execute(status -> {
                jdbc.update("INSERT INTO \"" + schema + "\".orders VALUES (1)");
                String id = queue.enqueue(CHARGE, new Charge(1, 100, Instant.EPOCH));
                // Not yet visible to the client's own pool: it is in this transaction.
                assertFalse(client.getJob(id).isPresent());
                status.setRollbackOnly();
                return id;
            });
            assertFalse(client.getJob(rolledBack).isPresent());
            assertEquals(0, jdbc.queryForObject("SELECT count(*) FROM \"" + schema + "\".orders", Long.class));

            String committed = tx.execute(status -> {
                jdbc.update("INSERT INTO \"" + schema + "\".orders VALUES (2)");
                return queue.enqueue(CHARGE, new Charge(2, 100, Instant.EPOCH));
            });
            assertTrue(client.getJob(committed).isPresent());
            assertEquals(1, jdbc.queryForObject("SELECT count(*) FROM \"" + schema + "\".orders", Long.class));
        });
    }

    @Test
    void aRepeatedKeyedEnqueueInAnotherTransactionGetsTheSameJob() {
        runner.run(context -> {
            JobQueue queue = context.getBean(JobQueue.class);
            TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
            EnqueueOptions keyed = EnqueueOptions.builder().idempotencyKey("charge:order-7").build();
            Charge charge = new Charge(7, 700, Instant.EPOCH);
            EnqueueResult first = tx.execute(s -> queue.enqueueWithResult(CHARGE, charge, keyed));
            EnqueueResult again = tx.execute(s -> queue.enqueueWithResult(CHARGE, charge, keyed));
            assertEquals(EnqueueOutcome.ACCEPTED, first.outcome());
            assertEquals(EnqueueOutcome.REPLAYED, again.outcome());
            assertEquals(first.jobId(), again.jobId());
        });
    }

    @Test
    void outsideATransactionAnEnqueueCommitsAtOnce() {
        runner.withPropertyValues("flexiq.join-transactions=false").run(context -> {
            JobQueue queue = context.getBean(JobQueue.class);
            FlexiQ client = context.getBean(FlexiQ.class);
            TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
            // With joining off, even inside a transaction the job goes through the client's pool.
            String id = tx.execute(status -> {
                status.setRollbackOnly();
                return queue.enqueue(CHARGE, new Charge(3, 1, Instant.EPOCH));
            });
            assertTrue(client.getJob(id).isPresent());
        });
    }

    @Test
    void queuesListedAsPausedArePausedBeforeTheWorkerStarts() {
        runner.withUserConfiguration(Handlers.class).withPropertyValues("flexiq.paused-queues=default,exports")
                .run(context -> {
                    FlexiQ client = context.getBean(FlexiQ.class);
                    assertEquals(List.of("default", "exports"),
                            client.pausedQueues().stream().map(PausedQueue::queue).toList());
                    client.enqueue(CHARGE, new Charge(9, 1, Instant.EPOCH));
                    Thread.sleep(500);
                    assertTrue(context.getBean(Handlers.class).charged.isEmpty(), "a paused queue's job ran");
                    assertTrue(client.resumeQueue("default"));
                    assertEquals(9, context.getBean(Handlers.class).charged.poll(30, TimeUnit.SECONDS).orderId());
                });
        runner.withPropertyValues("flexiq.paused-queues=").run(context ->
                assertTrue(context.getBean(FlexiQ.class).pausedQueues().isEmpty()));
    }

    @Configuration(proxyBeanMethods = false)
    static class Handlers {
        final BlockingQueue<Charge> charged = new ArrayBlockingQueue<>(10);

        @Bean
        FlexiQHandler<Charge> chargeHandler() {
            return new FlexiQHandler<>() {
                @Override
                public Task<Charge> task() {
                    return CHARGE;
                }

                @Override
                public void handle(Charge charge, JobContext job) {
                    charged.add(charge);
                }
            };
        }
    }

    @Test
    void handlerBeansRunInAWorkerOfTheContextWithTheApplicationsMapper() {
        runner.withUserConfiguration(Handlers.class)
                .withPropertyValues("flexiq.worker.concurrency=2", "spring.jackson.property-naming-strategy=SNAKE_CASE")
                .run(context -> {
                    FlexiQWorkerLifecycle worker = context.getBean(FlexiQWorkerLifecycle.class);
                    assertTrue(worker.isRunning());
                    Charge charge = new Charge(4, 400, Instant.parse("2026-11-30T23:14:10.123456789Z"));
                    context.getBean(JobQueue.class).enqueue(CHARGE, charge);
                    // The payload round-trips exactly, nanoseconds included.
                    assertEquals(charge, context.getBean(Handlers.class).charged.poll(30, TimeUnit.SECONDS));
                    context.stop();
                    assertFalse(worker.isRunning());
                });
    }

    @Test
    void theApplicationsJsonMapperWritesPayloadsInCanonicalForm() {
        runner.withPropertyValues("spring.jackson.property-naming-strategy=SNAKE_CASE").run(context -> {
            PayloadSerializer serializer = context.getBean(PayloadSerializer.class);
            byte[] json = serializer.serialize(new Charge(5, 500, Instant.parse("2026-11-30T23:14:10.123456789Z")));
            // Snake case from the application's settings; members sorted by the canonical form.
            assertEquals("{\"amount_cents\":500,\"at\":\"2026-11-30T23:14:10.123456789Z\",\"order_id\":5}",
                    new String(json, StandardCharsets.UTF_8));
        });
    }

    @Test
    void withoutJackson3TheDefaultSerializerServes() {
        runner.withClassLoader(new FilteredClassLoader(JsonMapper.class)).run(context -> {
            assertFalse(context.containsBean("flexiqPayloadSerializer"));
            String id = context.getBean(JobQueue.class).enqueue(CHARGE, new Charge(6, 1, Instant.EPOCH));
            assertTrue(context.getBean(FlexiQ.class).getJob(id).isPresent());
        });
    }

    /** A Jackson 2 mapper, as Spring Boot 3.5 configures one, writing snake case. */
    @Configuration(proxyBeanMethods = false)
    static class Jackson2Mapper {
        @Bean
        ObjectMapper jackson2Mapper() {
            return com.fasterxml.jackson.databind.json.JsonMapper.builder().findAndAddModules()
                    .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
                    .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE).build();
        }
    }

    @Test
    void withoutJackson3TheApplicationsJackson2MapperWritesPayloadsInCanonicalForm() {
        runner.withClassLoader(new FilteredClassLoader(JsonMapper.class)).withUserConfiguration(Jackson2Mapper.class)
                .run(context -> {
                    byte[] json = context.getBean(PayloadSerializer.class)
                            .serialize(new Charge(5, 500, Instant.parse("2026-11-30T23:14:10.123456789Z")));
                    assertEquals("{\"amount_cents\":500,\"at\":\"2026-11-30T23:14:10.123456789Z\",\"order_id\":5}",
                            new String(json, StandardCharsets.UTF_8));
                    String id = context.getBean(JobQueue.class).enqueue(CHARGE, new Charge(6, 1, Instant.EPOCH));
                    assertTrue(context.getBean(FlexiQ.class).getJob(id).isPresent());
                });
    }

    @Test
    void withBothJacksonMappersJackson3Serves() {
        runner.withUserConfiguration(Jackson2Mapper.class).run(context -> {
            byte[] json = context.getBean(PayloadSerializer.class).serialize(new Charge(5, 500, Instant.EPOCH));
            // Spring Boot 4's JsonMapper keeps the record's names; the Jackson 2 mapper would snake them.
            assertEquals("{\"amountCents\":500,\"at\":\"1970-01-01T00:00:00Z\",\"orderId\":5}",
                    new String(json, StandardCharsets.UTF_8));
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnQueue {
        // Primary over the FlexiQ client, which is a JobQueue too.
        @Bean
        @Primary
        JobQueue testQueue(JsonMapper mapper) {
            return TestQueue.create(new JacksonJsonSerializer(mapper)).handle(CHARGE, (charge, job) -> {});
        }
    }

    @Test
    void anApplicationsOwnJobQueueReplacesTheTransactionalOne() {
        runner.withUserConfiguration(OwnQueue.class).run(context -> {
            assertInstanceOf(TestQueue.class, context.getBean(JobQueue.class));
            assertTrue(context.getBeansOfType(TransactionalJobQueue.class).isEmpty());
            assertNotNull(context.getBean(FlexiQ.class));
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class Listening {
        final BlockingQueue<EnqueueEvent> heard = new ArrayBlockingQueue<>(10);

        @Bean
        FlexiQListener enqueueListener() {
            return new FlexiQListener() {
                @Override
                public void onEnqueue(EnqueueEvent event) {
                    heard.add(event);
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class SealedVault {
        @Bean
        PasswordSupplier vaultPassword() {
            return () -> {
                throw new IllegalStateException("the vault is sealed");
            };
        }
    }

    @Test
    void aPasswordSupplierBeanIsAskedForTheClientsConnections() {
        runner.withUserConfiguration(SealedVault.class).run(context -> {
            Throwable failure = context.getStartupFailure();
            assertNotNull(failure, "the supplier's failure stops the start");
            Throwable cause = failure;
            while (cause.getCause() != null) {
                cause = cause.getCause();
            }
            assertTrue(cause.getMessage().contains("the vault is sealed"), cause.getMessage());
        });
    }

    @Test
    void listenerBeansHearTheClient() {
        runner.withUserConfiguration(Listening.class).run(context -> {
            String id = context.getBean(JobQueue.class).enqueue(CHARGE, new Charge(8, 1, Instant.EPOCH));
            EnqueueEvent event = context.getBean(Listening.class).heard.poll(30, TimeUnit.SECONDS);
            assertNotNull(event);
            assertEquals(Optional.of(id), event.jobId());
            assertEquals(Optional.of(EnqueueOutcome.ACCEPTED), event.outcome());
        });
    }

    @Test
    void withAMeterRegistryFlexiQsMetersAreBound() {
        runner.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                        CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
                .run(context -> {
                    assertNotNull(context.getBean(FlexiQMetrics.class));
                    context.getBean(JobQueue.class).enqueue(CHARGE, new Charge(9, 1, Instant.EPOCH));
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    Counter accepted = null;
                    while (accepted == null && System.nanoTime() < deadline) {
                        accepted = registry.find("flexiq.enqueues").tag("outcome", "accepted").counter();
                        Thread.sleep(20);
                    }
                    assertNotNull(accepted, "the enqueue was counted");
                    assertEquals(1.0, accepted.count());
                });
    }

    @Test
    void theJobsGaugeHasAValueForEachWorkerQueueAsSoonAsTheContextStarts() {
        runner.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                        CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
                .withPropertyValues("flexiq.worker.queues=emails,reports")
                .run(context -> {
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    for (String queue : List.of("emails", "reports")) {
                        Gauge available = registry.find("flexiq.jobs").tags("queue", queue, "state", "available")
                                .gauge();
                        assertNotNull(available, "flexiq.jobs of queue " + queue + " at start");
                        assertEquals(0.0, available.value());
                    }
                });
    }

    @Test
    void withoutMicrometerThereAreNoMetrics() {
        runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
                .run(context -> assertTrue(context.getBeansOfType(FlexiQMetrics.class).isEmpty()));
        runner.run(context -> assertTrue(context.getBeansOfType(FlexiQMetrics.class).isEmpty()));
    }

    @Test
    void withoutHandlerBeansThereIsNoWorker() {
        runner.run(context -> assertTrue(context.getBeansOfType(FlexiQWorkerLifecycle.class).isEmpty()));
    }

    @Test
    void theWorkersClientRunsMaintenanceUnlessTurnedOff(PostgresServer server) {
        runner.withUserConfiguration(Handlers.class).withPropertyValues("flexiq.maintenance.interval=50ms")
                .run(context -> {
                    FlexiQ client = context.getBean(FlexiQ.class);
                    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (!client.runsMaintenance() && System.nanoTime() < end) {
                        Thread.sleep(10);
                    }
                    assertTrue(client.runsMaintenance());
                });
        runner.withUserConfiguration(Handlers.class)
                .withPropertyValues("flexiq.maintenance.enabled=false", "flexiq.maintenance.interval=50ms")
                .run(context -> {
                    assertTrue(context.getBean(FlexiQWorkerLifecycle.class).isRunning());
                    FlexiQ client = context.getBean(FlexiQ.class);
                    String schema = client.schema();
                    // The worker is up and has run a job. A client that takes part starts its
                    // maintenance thread as its first worker starts, and tries for the lock at once.
                    client.enqueue(CHARGE, new Charge(10, 1, Instant.EPOCH));
                    assertNotNull(context.getBean(Handlers.class).charged.poll(30, TimeUnit.SECONDS),
                            "the worker ran a job");
                    assertEquals(List.of(), maintenanceThreads(schema), "a maintenance thread");
                    assertFalse(client.runsMaintenance());
                    // A client of the schema that takes part is elected: the lock was free, and
                    // the thread looked for above is there for it.
                    Maintenance on = Maintenance.builder().interval(Duration.ofMillis(50)).build();
                    try (FlexiQ other = FlexiQ.builder(server.url()).schema(schema).maintenance(on).build()) {
                        Worker worker = other.worker().queues("other").handle(CHARGE, (charge, job) -> { }).build()
                                .start();
                        try {
                            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                            while (!other.runsMaintenance() && System.nanoTime() < end) {
                                Thread.sleep(10);
                            }
                            assertTrue(other.runsMaintenance(), "the other client was elected");
                            assertEquals(List.of("flexiq-maintenance-" + schema), maintenanceThreads(schema));
                            assertFalse(client.runsMaintenance());
                        } finally {
                            worker.close();
                        }
                    }
                });
    }

    /** The live threads of this JVM that run the maintenance of {@code schema}. */
    private static List<String> maintenanceThreads(String schema) {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(name -> name.equals("flexiq-maintenance-" + schema)).toList();
    }

    @Test
    void theWorkerCanBeTurnedOff() {
        runner.withUserConfiguration(Handlers.class).withPropertyValues("flexiq.worker.enabled=false")
                .run(context -> assertTrue(context.getBeansOfType(FlexiQWorkerLifecycle.class).isEmpty()));
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoHandlersOfOneTask {
        @Bean
        FlexiQHandler<Charge> first() {
            return handler();
        }

        @Bean
        FlexiQHandler<Charge> second() {
            return handler();
        }

        private static FlexiQHandler<Charge> handler() {
            return new FlexiQHandler<>() {
                @Override
                public Task<Charge> task() {
                    return CHARGE;
                }

                @Override
                public void handle(Charge charge, JobContext job) {}
            };
        }
    }

    @Test
    void twoHandlerBeansOfOneTaskFailTheStart() {
        runner.withUserConfiguration(TwoHandlersOfOneTask.class).run(context -> {
            Throwable failure = context.getStartupFailure();
            assertNotNull(failure);
            assertTrue(rootMessage(failure).contains("two FlexiQHandler beans handle task charge"), rootMessage(failure));
        });
    }

    @Test
    void flexiqEnabledFalseConfiguresNothing() {
        runner.withPropertyValues("flexiq.enabled=false").run(context -> {
            assertTrue(context.getBeansOfType(FlexiQ.class).isEmpty());
            assertTrue(context.getBeansOfType(JobQueue.class).isEmpty());
        });
    }

    @Test
    void theHealthIndicatorReportsTheDatabaseAndTheWorker() {
        runner.withUserConfiguration(Handlers.class).run(context -> {
            HealthIndicator health = context.getBean("flexiqHealthIndicator", HealthIndicator.class);
            Health up = health.health(true);
            assertEquals(Status.UP, up.getStatus(), up.toString());
            assertEquals("running", up.getDetails().get("worker"));
            assertEquals(0, up.getDetails().get("pendingMigrations"));
            assertEquals(java.util.List.of("charge"), up.getDetails().get("tasks"));
            context.getBean(FlexiQWorkerLifecycle.class).stop();
            assertEquals(Status.DOWN, health.health(true).getStatus());
        });
    }

    @Test
    void theHealthIndicatorIsDownWithoutTheSchema() {
        runner.withPropertyValues("flexiq.migrate=false").run(context -> {
            Health health = context.getBean("flexiqHealthIndicator", HealthIndicator.class).health(true);
            assertEquals(Status.DOWN, health.getStatus(), health.toString());
            assertTrue((Integer) health.getDetails().get("pendingMigrations") > 0, health.toString());
        });
    }

    @Test
    void withoutTheHealthModuleThereIsNoIndicator() {
        runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
                .run(context -> assertFalse(context.containsBean("flexiqHealthIndicator")));
        runner.withPropertyValues("management.health.flexiq.enabled=false")
                .run(context -> assertFalse(context.containsBean("flexiqHealthIndicator")));
    }

    /** A data source of another database, as a service connection or properties would give it. */
    @Configuration(proxyBeanMethods = false)
    static class MysqlDetails {
        @Bean
        JdbcConnectionDetails mysql() {
            return new JdbcConnectionDetails() {
                @Override
                public String getUsername() {
                    return "app";
                }

                @Override
                public String getPassword() {
                    return "secret";
                }

                @Override
                public String getJdbcUrl() {
                    return "jdbc:mysql://db/app";
                }
            };
        }
    }

    @Test
    void anotherDatabasesDataSourceFailsTheStartSayingWhatToSet() {
        bare.withUserConfiguration(MysqlDetails.class).run(context -> {
            String message = rootMessage(context.getStartupFailure());
            assertTrue(message.contains("jdbc:mysql:") && message.contains("set flexiq.url"), message);
            assertFalse(message.contains("secret"), message);
        });
    }

    @Test
    void anApplicationsOwnDataSourceWithoutFlexiqUrlFailsTheStartSayingWhatToSet() {
        bare.withBean(DataSource.class, () -> new DriverManagerDataSource("jdbc:postgresql://db/app", "app", "secret"))
                .run(context -> {
                    FlexiQConfigurationException e = configurationFailure(context.getStartupFailure());
                    assertTrue(e.getDescription().contains("DataSource bean (" + DriverManagerDataSource.class.getName()),
                            e.getDescription());
                    assertTrue(e.getAction().startsWith("Set flexiq.url to that database"), e.getAction());
                });
    }

    @Test
    void aDataSourceUrlWithoutSpringBootsJdbcModuleFailsTheStartSayingWhatToAdd() {
        // As in an application without spring-boot-starter-jdbc (bare has no DataSource auto-configuration).
        bare.withPropertyValues("spring.datasource.url=jdbc:postgresql://db/app").run(context -> {
            FlexiQConfigurationException e = configurationFailure(context.getStartupFailure());
            assertTrue(e.getDescription().startsWith("spring.datasource.url is set, but Spring Boot made no DataSource"),
                    e.getDescription());
            assertTrue(e.getAction().contains("spring-boot-starter-jdbc"), e.getAction());
            assertEquals("spring.datasource.url", e.getProperty());
        });
    }

    @Test
    void springBoot3sConfigurationAddsNothingOnSpringBoot4() throws Exception {
        Class<?> boot3 = Class.forName("io.flexiq.spring.FlexiQBoot3Configuration");
        runner.withConfiguration(AutoConfigurations.of(boot3)).withUserConfiguration(Handlers.class).run(context -> {
            assertNull(context.getStartupFailure());
            assertEquals(List.of("flexiqHealthIndicator"),
                    List.of(context.getBeanNamesForType(FlexiQHealthIndicator.class)));
            assertEquals(1, context.getBeanNamesForType(FlexiQAutoConfiguration.DataSourceDatabase.class).length);
        });
    }

    @Test
    void flexiqUrlWinsOverTheDataSource(PostgresServer server) {
        // The JDBC URL is never read, so that another database's cannot fail the start.
        bare.withUserConfiguration(MysqlDetails.class)
                .withPropertyValues("flexiq.url=" + server.url(), "flexiq.schema=flexiq_url_wins")
                .run(context -> {
                    assertEquals("flexiq_url_wins", context.getBean(FlexiQ.class).schema());
                    context.getBean(FlexiQ.class).dropSchema();
                });
    }

    @Test
    void aValueTheBuilderRefusesFailsTheStartNamingTheProperty() {
        runner.withPropertyValues("flexiq.pool-size=0").run(context -> {
            String message = rootMessage(context.getStartupFailure());
            assertTrue(message.startsWith("flexiq.pool-size=0 is refused: "), message);
            assertEquals("flexiq.pool-size", configurationFailure(context.getStartupFailure()).getProperty());
        });
        runner.withPropertyValues("flexiq.maintenance.batch-size=-1").run(context -> {
            String message = rootMessage(context.getStartupFailure());
            assertTrue(message.startsWith("flexiq.maintenance.batch-size=-1 is refused: "), message);
        });
    }

    @Test
    void aRefusedUrlIsShownWithoutItsPassword() {
        // The NUL within: the property values' parser trims the ends.
        runner.withPropertyValues("flexiq.direct-url=postgres://app:secret@db/a\u0000pp").run(context -> {
            String message = rootMessage(context.getStartupFailure());
            assertTrue(message.startsWith("flexiq.direct-url=postgres://app:***@db/a"), message);
            assertFalse(message.contains("secret"), message);
        });
    }

    @Test
    void withoutAnyDatabaseTheStartSaysWhatToSet() {
        bare.run(context -> {
            String message = rootMessage(context.getStartupFailure());
            assertTrue(message.startsWith("no database to connect FlexiQ to. Set flexiq.url"), message);
            assertTrue(message.contains("spring.datasource.url"), message);
        });
    }

    /** The configuration failure among the causes of a failed start. */
    static FlexiQConfigurationException configurationFailure(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof FlexiQConfigurationException e) {
                return e;
            }
        }
        throw new AssertionError("no FlexiQConfigurationException among the causes", failure);
    }

    private static String rootMessage(Throwable failure) {
        Throwable t = failure;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getMessage();
    }
}
