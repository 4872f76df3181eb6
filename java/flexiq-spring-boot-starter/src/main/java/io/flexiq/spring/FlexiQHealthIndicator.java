package io.flexiq.spring;

import io.flexiq.FlexiQ;
import io.flexiq.StorageException;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * FlexiQ's health, as {@code flexiq} under {@code /actuator/health}: up when PostgreSQL answers
 * through the client's pool, FlexiQ's schema has every migration and definition of this
 * library ({@link FlexiQ#pendingMigrations()} is 0), and the worker runs, if the application
 * has handler beans; down otherwise, with the error. Details: the schema, the pending
 * migrations, and the worker's state, queues and tasks. PostgreSQL failing to answer is
 * reported as down with its message, without logging: a probe every few seconds during an
 * outage would otherwise log a stack trace each time, and the worker already reports the
 * outage, once.
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
        builder.withDetail("schema", client.schema());
        if (worker != null) {
            builder.withDetail("worker", worker.isRunning() ? "running" : "stopped")
                    .withDetail("queues", worker.settings().getQueues())
                    .withDetail("tasks", worker.tasks());
        }
        int pending;
        try {
            pending = client.pendingMigrations();
        } catch (StorageException e) {
            builder.down().withDetail("error", e.getMessage());
            return;
        }
        builder.withDetail("pendingMigrations", pending);
        if (pending > 0 || (worker != null && !worker.isRunning())) {
            builder.down();
        } else {
            builder.up();
        }
    }
}
