package io.flexiq.spring;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flexiq.CanonicalJsonSerializer;
import io.flexiq.FlexiQ;
import io.flexiq.FlexiQListener;
import io.flexiq.JobQueue;
import io.flexiq.Maintenance;
import io.flexiq.PasswordSupplier;
import io.flexiq.PayloadCodec;
import io.flexiq.PayloadSerializer;
import io.flexiq.micrometer.FlexiQMetrics;
import io.flexiq.opentelemetry.FlexiQTracing;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;
import org.springframework.core.task.VirtualThreadTaskExecutor;
import tools.jackson.databind.json.JsonMapper;

/**
 * Auto-configuration of FlexiQ (turned off by {@code flexiq.enabled=false}):
 * <ul>
 *   <li>a {@link FlexiQ} client on {@code flexiq.url}, else on the database of
 *       {@code spring.datasource.*} (its JDBC URL carried over, see {@link JdbcUrls}), migrated at
 *       startup unless {@code flexiq.migrate=false}, with a pool of its own, and the
 *       application's {@link FlexiQListener} beans as listeners;
 *   <li>a {@link PayloadSerializer}: the application's Jackson 3 {@link JsonMapper} in canonical
 *       form ({@link JacksonJsonSerializer}; Spring Boot 4), else its Jackson 2
 *       {@link ObjectMapper} ({@link CanonicalJsonSerializer#CanonicalJsonSerializer(ObjectMapper)};
 *       Spring Boot 3.5), or FlexiQ's default without either;
 *   <li>the application's {@link PayloadCodec} bean on the client, else, with
 *       {@code flexiq.encryption.keys.*}, AES-256-GCM encryption of payloads at rest
 *       ({@link FlexiQProperties.Encryption});
 *   <li>with spring-jdbc, the primary {@link JobQueue}, a {@link TransactionalJobQueue} that
 *       enqueues in the Spring-managed transaction in progress;
 *   <li>with {@link FlexiQHandler} beans, a worker running them in the application's lifecycle
 *       ({@link FlexiQWorkerLifecycle}; off with {@code flexiq.worker.enabled=false}), the job of
 *       a {@code @Transactional} handler completed in its transaction ({@link HandlerTransactions});
 *   <li>with a Micrometer {@link MeterRegistry} bean, {@link FlexiQMetrics}, which Spring Boot
 *       binds to it (the {@code flexiq.*} meters; {@code /actuator/metrics} lists them);
 *   <li>with an OpenTelemetry {@link OpenTelemetry} bean, tracing of enqueues and attempts
 *       ({@link FlexiQTracing}; off with {@code flexiq.tracing.enabled=false}).
 * </ul>
 * Each bean gives way to one of the application's own.
 *
 * <p><b>Spring Boot 3.5 and 4.</b> This class names no type of either generation's own: what
 * moved between them (the JDBC connection details, the health contributor API) is read by
 * {@link FlexiQBoot4Configuration} and by {@code FlexiQBoot3Configuration}, each skipped
 * unless its generation's classes are there. The classes named here by name moved too, so
 * both generations' names are listed.
 */
@AutoConfiguration(afterName = {
        // Spring Boot 4
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        // Spring Boot 3.5
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
        "org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass(FlexiQ.class)
@ConditionalOnBooleanProperty(name = "flexiq.enabled", matchIfMissing = true)
@EnableConfigurationProperties(FlexiQProperties.class)
public final class FlexiQAutoConfiguration {
    /** Created by Spring. */
    public FlexiQAutoConfiguration() {}

    /**
     * The client, on the configured database, with every {@link FlexiQListener} bean as a
     * listener and the application's {@link PayloadCodec} bean or the one of
     * {@code flexiq.encryption.*}, and the application's {@link PasswordSupplier} bean, asked at
     * every new connection (credentials that rotate); closed (its worker first) with the context.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    FlexiQ flexiQ(FlexiQProperties properties, ObjectProvider<PayloadSerializer> serializer,
            ObjectProvider<PayloadCodec> codec, ObjectProvider<DataSourceDatabase> dataSourceDatabase,
            ObjectProvider<FlexiQListener> listeners, ObjectProvider<PasswordSupplier> password,
            Environment environment, ObjectProvider<DataSource> dataSources) {
        // First, so that a bad key fails the startup before any connection is tried.
        PayloadCodec chosenCodec = codec.getIfAvailable(() -> properties.getEncryption().codec().orElse(null));
        String url = properties.getUrl();
        if (url == null || url.isBlank()) {
            DataSourceDatabase database = dataSourceDatabase.getIfAvailable();
            if (database == null) {
                throw MissingDatabase.explain(environment, dataSources);
            }
            url = database.postgresUrl();
        }
        FlexiQ.Builder builder = FlexiQ.builder(url).migrate(properties.isMigrate())
                .maintenance(maintenance(properties.getMaintenance()));
        if (properties.getDirectUrl() != null) {
            PropertyCheck.apply("flexiq.direct-url", properties.getDirectUrl(), builder::directUrl);
        }
        password.ifAvailable(builder::passwordSupplier);
        PropertyCheck.apply("flexiq.schema", properties.getSchema(), builder::schema);
        PropertyCheck.apply("flexiq.pool-size", properties.getPoolSize(), builder::poolSize);
        PropertyCheck.apply("flexiq.connect-timeout", properties.getConnectTimeout(), builder::connectTimeout);
        PropertyCheck.apply("flexiq.acquire-timeout", properties.getAcquireTimeout(), builder::acquireTimeout);
        if (properties.getKeyRetention() != null) {
            PropertyCheck.apply("flexiq.key-retention", properties.getKeyRetention(), builder::keyRetention);
        }
        PayloadSerializer chosen = serializer.getIfAvailable();
        if (chosen != null) {
            builder.serializer(chosen);
        }
        if (chosenCodec != null) {
            builder.payloadCodec(chosenCodec);
        }
        listeners.orderedStream().forEach(builder::listener);
        FlexiQ flexiq = builder.build();
        try {
            // Before the worker's first claim, which waits for the FlexiQ bean.
            for (String queue : properties.getPausedQueues()) {
                PropertyCheck.apply("flexiq.paused-queues", queue, flexiq::pauseQueue);
            }
        } catch (RuntimeException e) {
            flexiq.close();
            throw e;
        }
        return flexiq;
    }

    private static Maintenance maintenance(FlexiQProperties.Maintenance m) {
        Maintenance.Builder builder = Maintenance.builder().enabled(m.isEnabled());
        PropertyCheck.apply("flexiq.maintenance.interval", m.getInterval(), builder::interval);
        PropertyCheck.apply("flexiq.maintenance.completed-retention", m.getCompletedRetention(),
                builder::completedRetention);
        PropertyCheck.apply("flexiq.maintenance.cancelled-retention", m.getCancelledRetention(),
                builder::cancelledRetention);
        PropertyCheck.apply("flexiq.maintenance.dead-retention", m.getDeadRetention(), builder::deadRetention);
        PropertyCheck.apply("flexiq.maintenance.batch-size", m.getBatchSize(), builder::batchSize);
        return builder.build();
    }

    /**
     * The primary {@link JobQueue}: enqueues join the Spring-managed transaction. An
     * application's own {@code JobQueue} bean (a {@link io.flexiq.TestQueue} in a test, say)
     * replaces it; the {@link FlexiQ} client, also a {@code JobQueue}, does not. Mark one's own
     * {@code @Primary} too, since the client remains a candidate.
     */
    @Bean
    @Primary
    @ConditionalOnClass(name = "org.springframework.jdbc.datasource.DataSourceUtils")
    @ConditionalOnMissingBean(value = JobQueue.class, ignored = FlexiQ.class)
    TransactionalJobQueue flexiqJobQueue(FlexiQ client, FlexiQProperties properties,
            ObjectProvider<DataSource> dataSource) {
        return new TransactionalJobQueue(client, properties.isJoinTransactions() ? dataSource.getIfUnique() : null);
    }

    /**
     * The worker of the application's handler beans; none without them. With Spring Boot's
     * virtual threads on ({@code spring.threads.virtual.enabled=true} on Java 21 or later),
     * handlers run on virtual threads named {@code flexiq-handler-<n>}.
     */
    @Bean
    @ConditionalOnBean(FlexiQHandler.class)
    @ConditionalOnBooleanProperty(name = "flexiq.worker.enabled", matchIfMissing = true)
    @ConditionalOnMissingBean
    FlexiQWorkerLifecycle flexiqWorker(FlexiQ client, List<FlexiQHandler<?>> handlers, FlexiQProperties properties,
            Environment environment, ObjectProvider<HandlerTransactions> transactions) {
        ThreadFactory handlerThreads = virtualThreads(environment)
                ? new VirtualThreadTaskExecutor("flexiq-handler-").getVirtualThreadFactory()
                : null;
        return new FlexiQWorkerLifecycle(client, handlers, properties.getWorker(), handlerThreads,
                transactions.getIfAvailable());
    }

    /**
     * With OpenTelemetry's API and an {@link OpenTelemetry} bean (Spring Boot's, with Micrometer
     * Tracing's OpenTelemetry bridge, or the application's own): the client's enqueues and
     * attempts are traced ({@link FlexiQTracing}), from the moment every singleton exists, before
     * the worker starts. Off with {@code flexiq.tracing.enabled=false}.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.opentelemetry.api.OpenTelemetry")
    @ConditionalOnBooleanProperty(name = "flexiq.tracing.enabled", matchIfMissing = true)
    static class TracingConfiguration {
        @Bean
        static SmartInitializingSingleton flexiqTracing(ObjectProvider<FlexiQ> client,
                ObjectProvider<OpenTelemetry> openTelemetry) {
            return () -> client.ifAvailable(c -> openTelemetry.ifUnique(otel -> FlexiQTracing.enable(c, otel)));
        }
    }

    /**
     * With Spring's transactions and JDBC: the job of a {@code @Transactional} handler completes
     * in that transaction ({@link HandlerTransactions}).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.springframework.transaction.TransactionExecutionListener",
            "org.springframework.jdbc.datasource.DataSourceUtils"})
    static class TransactionsConfiguration {
        /** Static: a bean post-processor, created before the beans it processes. */
        @Bean
        static HandlerTransactions flexiqHandlerTransactions(ObjectProvider<DataSource> dataSource) {
            return new HandlerTransactions(dataSource);
        }
    }

    /**
     * Whether Spring Boot runs the application on virtual threads: the rule of both generations'
     * {@code Threading.VIRTUAL}, whose class moved from Boot 3.5's autoconfigure module to Boot
     * 4's core, read here without either.
     */
    static boolean virtualThreads(Environment environment) {
        return environment.getProperty("spring.threads.virtual.enabled", Boolean.class, false)
                && Runtime.version().feature() >= 21;
    }

    /** The application's Jackson 3 mapper (Spring Boot 4's) as FlexiQ's payload serializer. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(JsonMapper.class)
    static class JacksonConfiguration {
        @Bean
        @ConditionalOnBean(JsonMapper.class)
        @ConditionalOnMissingBean(PayloadSerializer.class)
        PayloadSerializer flexiqPayloadSerializer(JsonMapper mapper) {
            return CanonicalJsonSerializer.canonicalizing(new JacksonJsonSerializer(mapper));
        }
    }

    /**
     * The application's Jackson 2 mapper (Spring Boot 3.5's) as FlexiQ's payload serializer, when
     * it has no Jackson 3 mapper, whichever of the two configurations Spring reads first.
     */
    @Configuration(proxyBeanMethods = false)
    static class Jackson2Configuration {
        @Bean
        @ConditionalOnBean(ObjectMapper.class)
        @ConditionalOnMissingBean(value = PayloadSerializer.class, type = "tools.jackson.databind.json.JsonMapper")
        PayloadSerializer flexiqPayloadSerializer(ObjectMapper mapper) {
            return new CanonicalJsonSerializer(mapper);
        }
    }

    /** FlexiQ's meters, when the application has a Micrometer registry. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean(MeterRegistry.class)
    static class MetricsConfiguration {
        /**
         * Bound to every registry by Spring Boot, as each {@code MeterBinder} bean; closed before
         * the client. The worker's queues have their series of {@code flexiq.jobs} from the start.
         */
        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        FlexiQMetrics flexiqMetrics(FlexiQ client, FlexiQProperties properties) {
            return new FlexiQMetrics(client, properties.getMetrics().getRefresh(), properties.getWorker().getQueues());
        }
    }

    /** The application's database as a {@code postgres://} URL, converted when first asked for. */
    @FunctionalInterface
    interface DataSourceDatabase {
        String postgresUrl();
    }
}
