package io.flexiq.examples.orders;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * An orders service on FlexiQ's Spring Boot starter: {@code POST /orders} stores an order and
 * enqueues its charge in one transaction ({@link OrderService}), and {@link ChargeHandler}, a
 * handler bean, charges it. The starter configures the rest from {@code spring.datasource.*}
 * and {@code flexiq.*} ({@code application.properties}).
 */
@SpringBootApplication
public class OrdersApplication {
    /** Starts the service. */
    public static void main(String[] args) {
        SpringApplication.run(OrdersApplication.class, args);
    }
}
