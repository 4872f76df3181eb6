package io.flexiq.internal.worker;

import io.flexiq.JobEvent;
import io.flexiq.Worker;
import io.flexiq.internal.NativeBridge;
import io.flexiq.internal.observability.Listeners;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The jobs a rescue moved (by a worker or by maintenance), logged and published: their worker
 * lost them, or their deadline passed while they waited, so nobody else says so.
 */
public final class Rescues {
    /** Worker's logger, where operators look for what happens to jobs. */
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);

    private Rescues() {}

    public static void report(List<NativeBridge.Rescued> moved, Listeners listeners) {
        for (NativeBridge.Rescued r : moved) {
            String job = HeldAttempt.describe(r.id(), r.task(), r.queue());
            JobMdc.around(r.id(), r.task(), r.queue(), r.attempt(), () -> {
                log(r, job);
            });
            if (listeners.active()) {
                listeners.changed(r.dead() ? JobEvent.Kind.DEAD_LETTERED : JobEvent.Kind.RESCUED, r.id(), r.task(),
                        r.queue(), r.attempt(), r.maxAttempts(), r.error());
            }
        }
    }

    private static void log(NativeBridge.Rescued r, String job) {
        if (r.late()) {
            LOG.error("{} is dead: {} (redrive it to run it anyway)", job, r.error());
        } else if (r.dead()) {
            LOG.error("{} is dead: the lease of attempt {} of {} passed (its worker died, stalled or lost"
                    + " PostgreSQL), and it has no attempts left (redrive it to run it again; should that"
                    + " attempt's outcome still arrive first, it is recorded)", job, r.attempt(), r.maxAttempts());
        } else {
            LOG.warn("{}: the lease of attempt {} of {} passed (its worker died, stalled or lost PostgreSQL);"
                    + " the job is due again (should that attempt's outcome arrive before another attempt"
                    + " starts, it is recorded)", job, r.attempt(), r.maxAttempts());
        }
    }
}
