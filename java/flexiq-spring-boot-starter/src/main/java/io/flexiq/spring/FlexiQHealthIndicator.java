package io.flexiq.spring;

import io.flexiq.FlexiQ;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * FlexiQ's health on Spring Boot 4, as {@code flexiq} under {@code /actuator/health}: up when
 * PostgreSQL answers, the schema is migrated and the worker (if any) runs; what it checks and
 * shows is {@link FlexiQHealthCheck}'s.
 */
public final class FlexiQHealthIndicator extends AbstractHealthIndicator {
    private final FlexiQ client;
    private final FlexiQWorkerLifecycle worker;

    /** Health of {@code client} and of {@code worker} (null without handler beans). */
    public FlexiQHealthIndicator(FlexiQ client, FlexiQWorkerLifecycle worker) {
        super("FlexiQ health check failed");
        this.client = client;
        this.worker = worker;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        FlexiQHealthCheck check = FlexiQHealthCheck.of(client, worker);
        builder.withDetails(check.details());
        if (check.up()) {
            builder.up();
        } else {
            builder.down();
        }
    }
}
