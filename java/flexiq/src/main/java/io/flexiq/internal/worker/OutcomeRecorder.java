package io.flexiq.internal.worker;

import io.flexiq.StorageUnavailableException;
import io.flexiq.Worker;
import io.flexiq.internal.observability.Listeners;
import io.flexiq.internal.observability.Trouble;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records how attempts ended, on a thread of its own: completions in batches, failures one by
 * one, unfinished attempts given back. An outcome PostgreSQL cannot take now (it is unavailable)
 * is kept and tried again, its lease still extended meanwhile, so a short outage neither runs a
 * finished handler again nor lets its job's lease pass; only a worker closing gives up, at its
 * deadline. Each failed attempt is logged once recorded: a warning while the job has attempts
 * left, an error when it is dead-lettered.
 */
final class OutcomeRecorder implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    /** How long the first completion of a batch waits for others to join it. */
    private static final long COMPLETION_LINGER_MILLIS = 2;
    /** The most completions recorded in one statement. */
    private static final int COMPLETION_BATCH = 1_000;
    private static final long FIRST_RETRY_MILLIS = 50;
    private static final long LAST_RETRY_MILLIS = 1_000;
    private static final long IDLE_WAIT_MILLIS = 20;

    private enum Kind { SUCCEEDED, FAILED, GIVEN_BACK }

    private record Outcome(HeldAttempt attempt, Kind kind, String error) {}

    private final WorkerStore store;
    private final HeldAttempts held;
    private final Listeners listeners;
    private final LinkedBlockingQueue<Outcome> arrived = new LinkedBlockingQueue<>();
    private final List<HeldAttempt> completions = new ArrayList<>();
    private final List<Outcome> failures = new ArrayList<>();
    private final List<HeldAttempt> givenBack = new ArrayList<>();
    private final Trouble trouble;
    private volatile boolean stopping;
    private volatile long stopByNanos;

    OutcomeRecorder(WorkerStore store, HeldAttempts held, Listeners listeners, Trouble outage) {
        this.store = store;
        this.held = held;
        this.listeners = listeners;
        this.trouble = outage.activity("recording the outcomes of attempts");
    }

    void succeeded(HeldAttempt a) {
        arrived.add(new Outcome(a, Kind.SUCCEEDED, null));
    }

    void failed(HeldAttempt a, String error) {
        arrived.add(new Outcome(a, Kind.FAILED, error));
    }

    void giveBack(List<HeldAttempt> attempts) {
        for (HeldAttempt a : attempts) {
            arrived.add(new Outcome(a, Kind.GIVEN_BACK, null));
        }
    }

    /** Records what has arrived and what still arrives, then stops; gives up on what PostgreSQL has not taken by {@code deadlineNanos}. */
    void stop(long deadlineNanos) {
        stopByNanos = deadlineNanos;
        stopping = true;
    }

    @Override
    public void run() {
        long retryMillis = FIRST_RETRY_MILLIS;
        while (true) {
            try {
                if (!gather()) {
                    if (stopping && arrived.isEmpty()) {
                        return;
                    }
                    continue;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                abandon();
                return;
            }
            if (recordPending()) {
                trouble.succeeded();
                retryMillis = FIRST_RETRY_MILLIS;
                continue;
            }
            if (stopping && System.nanoTime() - stopByNanos > 0) {
                abandon();
                return;
            }
            if (!WorkerEngine.sleep(retryMillis)) {
                abandon();
                return;
            }
            retryMillis = Math.min(2 * retryMillis, LAST_RETRY_MILLIS);
        }
    }

    /** Moves arrived outcomes to the pending lists; false when nothing is pending. */
    private boolean gather() throws InterruptedException {
        if (nothingPending()) {
            // Short, so that a stop is noticed soon.
            Outcome first = arrived.poll(IDLE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
            if (first == null) {
                return false;
            }
            add(first);
            if (first.kind() == Kind.SUCCEEDED && arrived.size() < COMPLETION_BATCH) {
                // A moment's wait lets completions gather into fewer, larger commits.
                Thread.sleep(COMPLETION_LINGER_MILLIS);
            }
        }
        for (Outcome o; completions.size() < COMPLETION_BATCH && (o = arrived.poll()) != null; ) {
            add(o);
        }
        return true;
    }

    private void add(Outcome o) {
        switch (o.kind()) {
            case SUCCEEDED -> completions.add(o.attempt());
            case FAILED -> failures.add(o);
            case GIVEN_BACK -> givenBack.add(o.attempt());
        }
    }

    private boolean nothingPending() {
        return completions.isEmpty() && failures.isEmpty() && givenBack.isEmpty();
    }

    /** Records every pending outcome it can; false when PostgreSQL was unavailable for one. */
    private boolean recordPending() {
        if (!completions.isEmpty()
                && !tryRecord(() -> complete(completions), () -> drop(completions), completions.size() + " completions")) {
            return false;
        }
        for (Iterator<Outcome> it = failures.iterator(); it.hasNext(); ) {
            Outcome f = it.next();
            if (!tryRecord(() -> fail(f), () -> held.remove(f.attempt()), "the failure of " + f.attempt())) {
                return false;
            }
            it.remove();
        }
        return givenBack.isEmpty()
                || tryRecord(this::giveBack, () -> drop(givenBack), "giving back " + givenBack.size() + " jobs");
    }

    /**
     * Runs one recording: true when it is done with (recorded, or refused for good and dropped),
     * false when PostgreSQL was unavailable and it should be tried again.
     */
    private boolean tryRecord(Runnable recording, Runnable dropIt, String what) {
        try {
            recording.run();
            return true;
        } catch (StorageUnavailableException e) {
            trouble.failed(e, "kept " + what + " to record once PostgreSQL answers");
            return false;
        } catch (RuntimeException e) {
            // Trying again would be refused again. Its leases no longer extended, the job runs
            // again once they pass.
            LOG.error("recording " + what + " was refused; the jobs run again once"
                    + " their leases pass", e);
            dropIt.run();
            return true;
        }
    }

    private void drop(List<HeldAttempt> attempts) {
        held.removeAll(attempts);
        attempts.clear();
    }

    private void complete(List<HeldAttempt> batch) {
        long[] done = store.complete(HeldAttempt.ids(batch), HeldAttempt.attempts(batch));
        Set<Long> recorded = new HashSet<>();
        for (long id : done) {
            recorded.add(id);
        }
        for (HeldAttempt a : batch) {
            if (recorded.contains(a.id)) {
                if (listeners.active()) {
                    listeners.job(a.completedEvent());
                }
            } else {
                LOG.warn(a + " succeeded after its lease had passed; the job was"
                        + " already given to another attempt");
            }
        }
        drop(batch);
    }

    private void fail(Outcome f) {
        HeldAttempt a = f.attempt();
        long dueMicros = store.fail(a.id, a.attempt, f.error());
        held.remove(a);
        if (dueMicros == -1) {
            LOG.warn(a + " failed after its lease had passed; the job was already"
                    + " given to another attempt: " + f.error());
            return;
        }
        String job = HeldAttempt.describe(a.id, a.handler.task().name(), a.queue);
        Duration retryDelay = null;
        if (dueMicros == 0) {
            LOG.error("{} is dead: attempt {} of {} failed, and it has no attempts left (redrive it to run it"
                    + " again): {}", job, a.attempt, a.maxAttempts, f.error());
        } else {
            // By this process's clock: a clock ahead of PostgreSQL's shortens it, never below zero.
            Duration untilDue = Duration.between(Instant.now(), Instant.EPOCH.plus(dueMicros, ChronoUnit.MICROS));
            retryDelay = untilDue.isNegative() ? Duration.ZERO : untilDue;
            LOG.warn("{}: attempt {} of {} failed; retrying in {} ms: {}", job, a.attempt, a.maxAttempts,
                    retryDelay.toMillis(), f.error());
        }
        if (listeners.active()) {
            listeners.job(a.failedEvent(f.error(), retryDelay));
        }
    }

    private void giveBack() {
        store.returnAttempts(HeldAttempt.ids(givenBack), HeldAttempt.attempts(givenBack));
        drop(givenBack);
    }

    private void abandon() {
        List<Outcome> rest = new ArrayList<>();
        arrived.drainTo(rest);
        rest.forEach(this::add);
        if (!nothingPending()) {
            LOG.warn("the worker closed before PostgreSQL took the outcomes of "
                    + (completions.size() + failures.size() + givenBack.size())
                    + " attempts; their jobs run again once their leases pass");
        }
        drop(completions);
        failures.forEach(f -> held.remove(f.attempt()));
        failures.clear();
        drop(givenBack);
    }
}
