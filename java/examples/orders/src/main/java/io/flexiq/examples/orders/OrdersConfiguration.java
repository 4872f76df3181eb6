package io.flexiq.examples.orders;

import java.time.Clock;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The service's own beans. */
@Configuration(proxyBeanMethods = false)
public class OrdersConfiguration {
    /** Creates the configuration; Spring does. */
    public OrdersConfiguration() {}

    /** The clock orders are stamped with. */
    @Bean
    Clock clock() {
        return Clock.systemUTC();
    }
}
