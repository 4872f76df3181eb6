package io.flexiq.spring;

import io.flexiq.FlexiQ;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.jdbc.JdbcConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring Boot 3.5's counterpart of {@link FlexiQBoot4Configuration}, compiled against Boot 3.5
 * and packed in the same jar: the database of {@code spring.datasource.*} (or of a service
 * connection) from Boot 3.5's JDBC connection details, and the {@code flexiq} health indicator
 * with Boot 3.5's Actuator. Each part is skipped unless its Boot 3.5 classes are there, so on
 * Spring Boot 4 this configuration adds nothing.
 */
@AutoConfiguration(after = FlexiQAutoConfiguration.class,
        afterName = "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration")
@ConditionalOnBean(FlexiQ.class)
public final class FlexiQBoot3Configuration {
    /** Created by Spring. */
    public FlexiQBoot3Configuration() {}

    /** The database of {@code spring.datasource.*} (or a service connection), as FlexiQ reaches it. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(JdbcConnectionDetails.class)
    static class DataSourceConfiguration {
        @Bean
        @ConditionalOnBean(JdbcConnectionDetails.class)
        FlexiQAutoConfiguration.DataSourceDatabase flexiqDataSourceDatabase(JdbcConnectionDetails details) {
            return () -> JdbcUrls.toPostgresUrl(details.getJdbcUrl(), details.getUsername(), details.getPassword());
        }
    }

    /** The {@code flexiq} health indicator, with Spring Boot 3.5's Actuator. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    @ConditionalOnEnabledHealthIndicator("flexiq")
    static class HealthConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "flexiqHealthIndicator")
        FlexiQBoot3HealthIndicator flexiqHealthIndicator(FlexiQ client, ObjectProvider<FlexiQWorkerLifecycle> worker) {
            return new FlexiQBoot3HealthIndicator(client, worker.getIfAvailable());
        }
    }
}
