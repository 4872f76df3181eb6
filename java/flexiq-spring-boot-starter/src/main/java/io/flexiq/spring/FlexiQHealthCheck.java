package io.flexiq.spring;

import io.flexiq.FlexiQ;
import io.flexiq.StorageException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * FlexiQ's health, as the {@code flexiq} indicator of either Spring Boot generation reports it
 * ({@link FlexiQHealthIndicator} on Boot 4, {@code FlexiQBoot3HealthIndicator} on Boot 3.5): up
 * when PostgreSQL answers through the client's pool, FlexiQ's schema has every migration and
 * definition of this library ({@link FlexiQ#pendingMigrations()} is 0), and the worker runs, if
 * the application has handler beans; down otherwise, with the error. Details: the schema, the
 * pending migrations, and the worker's state, queues and tasks. PostgreSQL failing to answer is
 * reported as down with its message, without logging: a probe every few seconds during an
 * outage would otherwise log a stack trace each time, and the worker already reports the
 * outage, once.
 *
 * @param up whether FlexiQ is up
 * @param details what the indicator shows, in order
 */
record FlexiQHealthCheck(boolean up, Map<String, Object> details) {
    /** The health of {@code client} and of {@code worker} (null without handler beans). */
    static FlexiQHealthCheck of(FlexiQ client, FlexiQWorkerLifecycle worker) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("schema", client.schema());
        if (worker != null) {
            details.put("worker", worker.isRunning() ? "running" : "stopped");
            details.put("queues", worker.settings().getQueues());
            details.put("tasks", worker.tasks());
        }
        int pending;
        try {
            pending = client.pendingMigrations();
        } catch (StorageException e) {
            details.put("error", e.getMessage());
            return new FlexiQHealthCheck(false, details);
        }
        details.put("pendingMigrations", pending);
        return new FlexiQHealthCheck(pending == 0 && (worker == null || worker.isRunning()), details);
    }
}
