package io.flexiq.internal.client;

import io.flexiq.FlexiQ;
import io.flexiq.JobQueue;
import io.flexiq.Maintenance;
import io.flexiq.PayloadSerializer;
import io.flexiq.Schedule;
import io.flexiq.ScheduleHandle;
import io.flexiq.Worker;
import io.flexiq.internal.maintenance.Maintainer;
import io.flexiq.internal.observability.Listeners;
import io.flexiq.internal.observability.Trouble;
import io.flexiq.internal.schedule.Declarations;
import io.flexiq.internal.schedule.Scheduler;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * What a {@link FlexiQ} client runs on threads of its own: its workers, the scheduler of its
 * schedules (made with the first one) and its part in its schema's maintenance (started with the
 * first worker, if enabled). Once the client is marked closed nothing new starts here, and
 * {@link #close()} stops what runs, in order: schedules, workers, maintenance.
 */
public final class Background {
    private final JobQueue client;
    private final long handle;
    private final String schema;
    private final PayloadSerializer serializer;
    private final Maintenance maintenance;
    private final Listeners listeners;
    private final Trouble outage;
    /** Where its schedules' declarations go. */
    private final Declarations declarations;
    /** Whether the client encodes payloads (see {@link Declarations}). */
    private final boolean payloadsEncoded;
    /** Whether the client is marked closed: set before {@link #close()} runs. */
    private final BooleanSupplier closed;
    /** Workers built from the client and not yet closed; closing the client closes them first. */
    private final Set<Worker> workers = ConcurrentHashMap.newKeySet();
    /** Enqueues the ticks of the client's schedules; made with the first one. */
    private Scheduler scheduler;
    /** The client's part in its schema's maintenance; started with the first worker, if enabled. */
    private Maintainer maintainer;

    /**
     * The threads of {@code client}, of {@code schema} through the native {@code handle}, whose
     * payloads {@code serializer} serializes, whose events go to {@code listeners} and whose
     * outage is {@code outage}; {@code closed} says whether the client is marked closed.
     */
    public Background(JobQueue client, long handle, String schema, PayloadSerializer serializer,
            Declarations declarations, boolean payloadsEncoded, Maintenance maintenance, Listeners listeners, Trouble outage,
            BooleanSupplier closed) {
        this.client = client;
        this.declarations = declarations;
        this.payloadsEncoded = payloadsEncoded;
        this.handle = handle;
        this.schema = schema;
        this.serializer = serializer;
        this.maintenance = maintenance;
        this.listeners = listeners;
        this.outage = outage;
        this.closed = closed;
    }

    /** See {@link FlexiQ#schedule(Schedule)}. */
    public ScheduleHandle schedule(Schedule<?> schedule) {
        if (schedule == null) {
            throw new IllegalArgumentException("schedule must not be null");
        }
        Scheduler s;
        synchronized (this) {
            // Under the lock that closeScheduler takes after the client is marked closed.
            requireOpen();
            if (scheduler == null) {
                scheduler = new Scheduler(client, schema, serializer, outage, declarations, payloadsEncoded);
            }
            s = scheduler;
        }
        return s.add(schedule);
    }

    /** See {@link FlexiQ#runsMaintenance()}. */
    public boolean runsMaintenance() {
        Maintainer m;
        synchronized (this) {
            m = maintainer;
        }
        return m != null && m.elected();
    }

    /**
     * A worker built from the client: closed with it. Its first one starts the client's part in
     * maintenance.
     *
     * @throws IllegalStateException if the client is closed (the worker is closed too)
     */
    public void register(Worker worker) {
        workers.add(worker);
        if (closed.getAsBoolean()) {
            // Lost a race with close(), which may not have seen it.
            workers.remove(worker);
            worker.close();
            requireOpen();
        }
        startMaintenance();
    }

    /** A worker that closed. */
    public void forget(Worker worker) {
        workers.remove(worker);
    }

    /** Takes part in the schema's maintenance from the first worker on, unless disabled. */
    private void startMaintenance() {
        if (!maintenance.enabled()) {
            return;
        }
        synchronized (this) {
            // Under the lock that closeMaintainer takes after the client is marked closed.
            if (maintainer == null && !closed.getAsBoolean()) {
                maintainer = new Maintainer(handle, schema, maintenance, listeners, outage);
                maintainer.start();
            }
        }
    }

    /**
     * Stops the schedules, closes the workers (each as {@link Worker#close()} does), then leaves
     * maintenance; called once the client is marked closed. Idempotent.
     */
    public void close() {
        closeScheduler();
        closeWorkers();
        closeMaintainer();
    }

    private void closeScheduler() {
        Scheduler s;
        synchronized (this) {
            s = scheduler;
        }
        if (s != null) {
            s.close();
        }
    }

    private void closeWorkers() {
        for (Worker worker : workers) {
            worker.close();
        }
    }

    /** Stops taking part in maintenance, freeing the schema's maintenance lock if this client held it. */
    private void closeMaintainer() {
        Maintainer m;
        synchronized (this) {
            m = maintainer;
        }
        if (m != null) {
            m.close();
        }
    }

    private void requireOpen() {
        if (closed.getAsBoolean()) {
            throw new IllegalStateException("this FlexiQ client is closed");
        }
    }
}
