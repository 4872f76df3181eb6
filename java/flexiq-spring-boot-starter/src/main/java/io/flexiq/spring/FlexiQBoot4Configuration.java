package io.flexiq.spring;

import io.flexiq.FlexiQ;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.jdbc.autoconfigure.JdbcConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What {@link FlexiQAutoConfiguration} takes from Spring Boot 4's own modules: the database of
 * {@code spring.datasource.*} (or of a service connection), from {@code spring-boot-jdbc}, and
 * the {@code flexiq} health indicator, with {@code spring-boot-health}. Each part is skipped
 * unless its Boot 4 classes are there, so on Spring Boot 3.5 this configuration adds nothing
 * and {@code FlexiQBoot3Configuration} does the same there.
 */
@AutoConfiguration(after = FlexiQAutoConfiguration.class,
        afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnBean(FlexiQ.class)
public final class FlexiQBoot4Configuration {
    /** Created by Spring. */
    public FlexiQBoot4Configuration() {}

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

    /** The {@code flexiq} health indicator, with Spring Boot's health module. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    @ConditionalOnEnabledHealthIndicator("flexiq")
    static class HealthConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "flexiqHealthIndicator")
        FlexiQHealthIndicator flexiqHealthIndicator(FlexiQ client, ObjectProvider<FlexiQWorkerLifecycle> worker) {
            return new FlexiQHealthIndicator(client, worker.getIfAvailable());
        }
    }
}
