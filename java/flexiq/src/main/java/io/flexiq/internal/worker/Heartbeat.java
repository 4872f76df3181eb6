package io.flexiq.internal.worker;

import io.flexiq.Worker;
import io.flexiq.internal.observability.Trouble;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a worker's registration, on a thread of its own: registers it at once, renews it every
 * third of its lease, and removes it as the worker stops. A worker whose heartbeats stall for a
 * whole lease is removed by maintenance and registered again by its next heartbeat.
 */
final class Heartbeat {
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    /** The longest closing waits for a heartbeat under way, and then for the removal. */
    static final long STOP_WAIT_MILLIS = 1_000;

    private final WorkerStore store;
    private final Registration registration;
    private final ScheduledExecutorService thread;
    private final Trouble trouble;

    Heartbeat(WorkerStore store, Registration registration, ThreadFactory threads, Trouble outage) {
        this.store = store;
        this.registration = registration;
        this.thread = Executors.newSingleThreadScheduledExecutor(threads);
        this.trouble = outage.activity("registering the worker");
    }

    void start() {
        long every = Math.max(1, registration.leaseMillis() / 3);
        thread.scheduleWithFixedDelay(this::beat, 0, every, TimeUnit.MILLISECONDS);
    }

    private void beat() {
        try {
            store.heartbeat(registration);
            trouble.succeeded();
        } catch (RuntimeException e) {
            trouble.failed(e, "trying again at the next heartbeat");
        }
    }

    /**
     * Stops heartbeating and removes the registration; never throws. Waits at most
     * {@value #STOP_WAIT_MILLIS} ms for a heartbeat under way and as long for the removal, so that
     * an unreachable PostgreSQL does not hold up closing: maintenance then removes the
     * registration once the lease has passed.
     */
    void stop() {
        thread.shutdownNow();
        Thread removal = new Thread(() -> {
            try {
                thread.awaitTermination(STOP_WAIT_MILLIS, TimeUnit.MILLISECONDS);
                store.deregister(registration.id());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                LOG.debug("removing the registration of worker {} failed; maintenance removes it once its lease"
                        + " has passed", registration.name(), e);
            }
        }, registration.name() + "-deregister");
        removal.setDaemon(true);
        removal.start();
        try {
            removal.join(2 * STOP_WAIT_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
