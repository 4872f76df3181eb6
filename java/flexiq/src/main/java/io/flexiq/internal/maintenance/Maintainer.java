package io.flexiq.internal.maintenance;

import io.flexiq.FlexiQ;
import io.flexiq.Maintenance;
import io.flexiq.MaintenanceReport;
import io.flexiq.internal.NativeBridge;
import io.flexiq.internal.observability.Listeners;
import io.flexiq.internal.observability.Trouble;
import io.flexiq.internal.worker.Rescues;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client's part in its schema's maintenance (see {@link Maintenance}): one daemon thread that,
 * at every interval, runs a pass if this client holds the schema's maintenance lock, trying for
 * the lock first when it does not. The lock lives in PostgreSQL, on a connection of this client's
 * own: closing the client, or its process dying, frees it for another client.
 */
public final class Maintainer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FlexiQ.class);

    private final long handle;
    private final String schema;
    private final Maintenance options;
    private final Listeners listeners;
    private final Trouble trouble;
    private final Thread thread;
    private volatile boolean stopping;
    /** Whether this client ran the last pass; written by the thread only. */
    private volatile boolean elected;

    public Maintainer(long handle, String schema, Maintenance options, Listeners listeners, Trouble outage) {
        this.handle = handle;
        this.schema = schema;
        this.options = options;
        this.listeners = listeners;
        this.trouble = outage.activity("maintenance of schema " + schema);
        this.thread = new Thread(this::run, "flexiq-maintenance-" + schema);
        thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    private void run() {
        long intervalMillis = options.interval().toMillis();
        while (!stopping) {
            boolean more = false;
            try {
                NativeBridge.Maintained tick = NativeBridge.maintain(handle, options);
                trouble.succeeded();
                if (!tick.permitted()) {
                    LOG.warn("this client's role may not delete the jobs of schema {} or release their keys, so it"
                            + " takes no part in maintenance: a client of the schema's owner must run it (or disable"
                            + " maintenance on this client with Maintenance.builder().enabled(false))", schema);
                    return;
                }
                NativeBridge.MaintenancePass pass = tick.pass();
                noteElected(pass != null);
                if (pass != null) {
                    Rescues.report(pass.rescued(), listeners);
                    MaintenanceReport report = pass.report();
                    if (report.keysReleased() > 0 || report.deleted() > 0) {
                        LOG.debug("maintenance of schema {}: {}", schema, report);
                    }
                    more = report.moreToDelete();
                }
            } catch (RuntimeException e) {
                if (stopping) {
                    return;
                }
                // The session is closed after a failure: the lock is free for another client.
                noteElected(false);
                trouble.failed(e, "trying again in " + intervalMillis + " ms");
            }
            if (!more && !sleep(intervalMillis)) {
                return;
            }
        }
    }

    /** Whether this client ran its schema's last maintenance pass. */
    public boolean elected() {
        return elected;
    }

    private void noteElected(boolean now) {
        if (now != elected) {
            elected = now;
            LOG.info(now ? "this client now runs the maintenance of schema {}"
                    : "this client no longer runs the maintenance of schema {}", schema);
        }
    }

    private boolean sleep(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
            return true;
        } catch (InterruptedException e) {
            return false;
        }
    }

    /** Stops the thread, waiting for a running pass to end, then leaves the election. */
    @Override
    public void close() {
        stopping = true;
        thread.interrupt();
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        try {
            NativeBridge.resignMaintenance(handle);
        } catch (RuntimeException e) {
            LOG.debug("leaving the maintenance election of schema {} failed; closing the client frees the lock", schema, e);
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
