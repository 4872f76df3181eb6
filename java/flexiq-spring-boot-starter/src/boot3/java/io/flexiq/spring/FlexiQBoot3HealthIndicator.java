package io.flexiq.spring;

import io.flexiq.FlexiQ;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * FlexiQ's health on Spring Boot 3.5, as {@code flexiq} under {@code /actuator/health}: the
 * same check and details as {@link FlexiQHealthIndicator} on Boot 4 ({@link FlexiQHealthCheck}).
 */
public final class FlexiQBoot3HealthIndicator extends AbstractHealthIndicator {
    private final FlexiQ client;
    private final FlexiQWorkerLifecycle worker;

    /** Health of {@code client} and of {@code worker} (null without handler beans). */
    public FlexiQBoot3HealthIndicator(FlexiQ client, FlexiQWorkerLifecycle worker) {
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
