package io.flexiq.internal.worker;

import io.flexiq.JobState;
import io.flexiq.StorageUnavailableException;
import io.flexiq.internal.NativeBridge;
import io.flexiq.Worker;
import io.flexiq.internal.observability.Listeners;
import io.flexiq.internal.observability.Trouble;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records how attempts ended, on a thread of its own: completions in batches, failures one by
 * one, unfinished attempts given back. A handler that completed its job in its own transaction
 * has that completion confirmed instead: read back in batches, and, where the transaction did
 * not commit, recorded as a failed attempt. An outcome PostgreSQL cannot take now (it is unavailable)
 * is kept and tried again, its lease still extended meanwhile, so a short outage neither runs a
 * finished handler again nor lets its job's lease pass; only a worker closing gives up, at its
 * deadline. Each failed attempt is logged once recorded: a warning while the job has attempts
 * left, an error with the failure's stack trace when it is dead-lettered; an outcome not
 * recorded is logged with why. Each line carries the job's MDC (see {@link JobMdc}).
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

    private enum Kind { SUCCEEDED, COMPLETED_IN_TRANSACTION, FAILED, GIVEN_BACK }

    /** An attempt's outcome; a failure has its error as stored and, if it threw, what it threw. */
    private record Outcome(HeldAttempt attempt, Kind kind, String error, Throwable thrown) {}

    /**
     * The error a failure stores (the job's last error and its attempt's): what its handler threw
     * with the stack trace, whose first line is {@code error}; the core bounds its length.
     */
    private static String stored(Outcome f) {
        if (f.thrown() == null) {
            return f.error();
        }
        java.io.StringWriter trace = new java.io.StringWriter();
        f.thrown().printStackTrace(new java.io.PrintWriter(trace));
        return trace.toString().stripTrailing();
    }

    private final WorkerStore store;
    private final HeldAttempts held;
    private final Listeners listeners;
    private final LinkedBlockingQueue<Outcome> arrived = new LinkedBlockingQueue<>();
    private final List<HeldAttempt> completions = new ArrayList<>();
    private final List<HeldAttempt> confirmations = new ArrayList<>();
    private final List<Outcome> failures = new ArrayList<>();
    private final List<HeldAttempt> givenBack = new ArrayList<>();
    /** Completions tried without an answer (PostgreSQL went away mid-call): they may have committed. */
    private final Set<HeldAttempt> unanswered = new HashSet<>();
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
        arrived.add(new Outcome(a, Kind.SUCCEEDED, null, null));
    }

    /** Attempt {@code a}'s handler returned after completing its job in a transaction of its own. */
    void completedInTransaction(HeldAttempt a) {
        arrived.add(new Outcome(a, Kind.COMPLETED_IN_TRANSACTION, null, null));
    }

    /** Attempt {@code a} failed with {@code error}; {@code thrown} is what its handler threw, if anything. */
    void failed(HeldAttempt a, String error, Throwable thrown) {
        arrived.add(new Outcome(a, Kind.FAILED, error, thrown));
    }

    void giveBack(List<HeldAttempt> attempts) {
        for (HeldAttempt a : attempts) {
            arrived.add(new Outcome(a, Kind.GIVEN_BACK, null, null));
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
            if ((first.kind() == Kind.SUCCEEDED || first.kind() == Kind.COMPLETED_IN_TRANSACTION)
                    && arrived.size() < COMPLETION_BATCH) {
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
            case COMPLETED_IN_TRANSACTION -> confirmations.add(o.attempt());
            case FAILED -> failures.add(o);
            case GIVEN_BACK -> givenBack.add(o.attempt());
        }
    }

    private boolean nothingPending() {
        return completions.isEmpty() && confirmations.isEmpty() && failures.isEmpty() && givenBack.isEmpty();
    }

    /** Records every pending outcome it can; false when PostgreSQL was unavailable for one. */
    private boolean recordPending() {
        if (!completions.isEmpty()
                && !tryRecord(() -> complete(completions), () -> drop(completions), completions.size() + " completions")) {
            return false;
        }
        if (!confirmations.isEmpty() && !tryRecord(this::confirm, () -> drop(confirmations),
                "confirming " + confirmations.size() + " completions in handlers' transactions")) {
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
        NativeBridge.Recorded done;
        try {
            done = store.complete(HeldAttempt.ids(batch), HeldAttempt.attempts(batch));
        } catch (StorageUnavailableException e) {
            // The statement may have committed before the connection broke.
            unanswered.addAll(batch);
            throw e;
        }
        Map<Long, Boolean> late = new HashMap<>();
        for (int i = 0; i < done.ids().length; i++) {
            late.put(done.ids()[i], done.late()[i]);
        }
        Set<Long> seen = new HashSet<>();
        List<HeldAttempt> refused = new ArrayList<>();
        for (HeldAttempt a : batch) {
            Boolean recordedLate = late.get(a.id);
            if (recordedLate == null) {
                refused.add(a);
                continue;
            }
            if (!seen.add(a.id)) {
                ranTwice(a);
                continue;
            }
            if (recordedLate) {
                recordedLate(a, "succeeded", "the job is completed");
            }
            if (listeners.active()) {
                listeners.job(a.completedEvent());
            }
        }
        drop(batch);
        if (!refused.isEmpty()) {
            refused(refused, "succeeded", null);
        }
        unanswered.removeAll(batch);
    }

    /**
     * Reads back the jobs that handlers completed in their own transactions: a job completed by
     * its attempt is done; one that its attempt still holds, or that a rescue took from it while
     * no later attempt started, was not completed (the transaction rolled back, or was still open
     * when the handler returned), and the attempt is recorded as failed; one a later attempt took
     * is that attempt's.
     */
    private void confirm() {
        Map<Long, NativeBridge.JobAttempt> now = new HashMap<>();
        for (NativeBridge.JobAttempt j : store.attemptsNow(HeldAttempt.ids(confirmations))) {
            now.put(j.id(), j);
        }
        List<HeldAttempt> refused = new ArrayList<>();
        for (HeldAttempt a : confirmations) {
            NativeBridge.JobAttempt j = now.get(a.id);
            if (j != null && j.attempt() == a.attempt && j.state() == JobState.COMPLETED) {
                held.remove(a);
                if (listeners.active()) {
                    listeners.job(a.completedEvent());
                }
            } else if (j != null && j.attempt() == a.attempt) {
                failures.add(new Outcome(a, Kind.FAILED, "the handler returned, but the transaction in which it"
                        + " completed the job did not commit (it was rolled back, or was still open when the handler"
                        + " returned)", null));
            } else {
                held.remove(a);
                refused.add(a);
            }
        }
        confirmations.clear();
        if (!refused.isEmpty()) {
            refused(refused, "succeeded", null);
        }
    }

    /**
     * Says that attempt {@code a}, completed in the same statement as an earlier run of the same
     * attempt of its job, is that job's second run in this worker: the first run's claim was
     * forgotten by a crash of PostgreSQL, and the job claimed again at the same attempt.
     */
    private void ranTwice(HeldAttempt a) {
        JobMdc.around(a, () -> {
            LOG.warn("{} succeeded a second time: PostgreSQL, restarting after a crash, forgot this attempt's claim"
                    + " (a claim commits without waiting for the disk), and the job was claimed again at the same"
                    + " attempt while the first run's outcome waited; the handler ran twice, and the job is"
                    + " completed once", a);
        });
    }

    /**
     * Says that attempt {@code a}'s outcome was recorded after its lease had passed and a rescue
     * had moved its job, no later attempt having started.
     */
    private void recordedLate(HeldAttempt a, String outcome, String result) {
        JobMdc.around(a, () -> {
            LOG.warn("{} {} after its lease had passed and a rescue had moved the job; recorded all the same, as"
                    + " no later attempt had started: {}, and the rescue does not count as an attempt",
                    a, outcome, result);
        });
        if (listeners.active()) {
            listeners.job(a.recordedLateEvent());
        }
    }

    /**
     * Says why the outcomes ({@code outcome}: succeeded or failed) of {@code attempts} were not
     * recorded, by where their jobs stand now: a later attempt started after the lease passed, or
     * PostgreSQL, restarting after a crash, forgot the attempt's claim (a claim commits without
     * waiting for the disk), so the job was or will be claimed again.
     */
    private void refused(List<HeldAttempt> attempts, String outcome, String error) {
        Map<Long, NativeBridge.JobAttempt> now = new HashMap<>();
        try {
            for (NativeBridge.JobAttempt j : store.attemptsNow(HeldAttempt.ids(attempts))) {
                now.put(j.id(), j);
            }
        } catch (RuntimeException e) {
            // Only the explanation is lost: each line then says what is known.
            LOG.debug("could not read where the jobs of refused outcomes stand", e);
        }
        String what = error == null ? outcome : outcome + " (" + error + ")";
        for (HeldAttempt a : attempts) {
            NativeBridge.JobAttempt j = now.get(a.id);
            String why;
            if (j == null) {
                why = now.isEmpty() ? "the job has moved on" : "the job no longer exists (it was purged)";
            } else if (j.attempt() > a.attempt) {
                why = "its lease had passed, and attempt " + j.attempt() + " of the job has started since (the job is "
                        + j.state().name().toLowerCase(Locale.ROOT) + "); that attempt decides";
            } else if (j.attempt() == a.attempt && j.state() == JobState.COMPLETED && a.isCompletedInTransaction()) {
                why = "the handler's transaction had completed the job before the failure, and the job stays completed";
            } else if (j.attempt() == a.attempt && j.state() == JobState.COMPLETED && error == null
                    && unanswered.contains(a)) {
                // An earlier try of this very completion committed; its answer was lost.
                if (listeners.active()) {
                    listeners.job(a.completedEvent());
                }
                continue;
            } else if (j.attempt() == a.attempt) {
                why = "PostgreSQL, restarting after a crash, forgot this attempt's claim (a claim commits without"
                        + " waiting for the disk), and the job was claimed again as attempt " + j.attempt()
                        + ", which decides (the job is " + j.state().name().toLowerCase(Locale.ROOT)
                        + "): the handler ran twice";
            } else {
                why = "PostgreSQL, restarting after a crash, forgot this attempt's claim (a claim commits without"
                        + " waiting for the disk): the job is " + j.state().name().toLowerCase(Locale.ROOT)
                        + " and runs again";
            }
            JobMdc.around(a, () -> {
                LOG.warn("{} {}, but the outcome was not recorded: {}", a, what, why);
            });
        }
    }

    private void fail(Outcome f) {
        HeldAttempt a = f.attempt();
        NativeBridge.Failed failed = store.fail(a.id, a.attempt, stored(f));
        held.remove(a);
        if (failed == null) {
            refused(List.of(a), "failed", f.error());
            return;
        }
        if (failed.late()) {
            recordedLate(a, "failed", failed.dead() ? "the job is dead" : "the job is due for its retry");
        }
        String job = HeldAttempt.describe(a.id, a.handler.task().name(), a.queue);
        // By this process's clock: a clock ahead of PostgreSQL's shortens it, never below zero.
        Duration untilDue = Duration.between(Instant.now(), Instant.EPOCH.plus(failed.dueMicros(), ChronoUnit.MICROS));
        Duration retryDelay = failed.dead() ? null : untilDue.isNegative() ? Duration.ZERO : untilDue;
        JobMdc.around(a, () -> {
            if (retryDelay == null) {
                // The last attempt: the failure's stack trace goes with it.
                LOG.error("{} is dead: attempt {} of {} failed, and it has no attempts left (redrive it to run it"
                        + " again): {}", job, a.attempt, a.maxAttempts, f.error(), f.thrown());
                return;
            }
            LOG.warn("{}: attempt {} of {} failed; retrying in {} ms: {}", job, a.attempt, a.maxAttempts,
                    retryDelay.toMillis(), f.error());
            if (f.thrown() != null) {
                // An attempt with more to come: the trace at DEBUG, the last attempt's at ERROR.
                LOG.debug("{}: the stack trace of attempt {}'s failure", job, a.attempt, f.thrown());
            }
        });
        if (listeners.active()) {
            listeners.job(a.failedEvent(f.error(), retryDelay));
        }
    }

    private void giveBack() {
        long[] returned = store.returnAttempts(HeldAttempt.ids(givenBack), HeldAttempt.attempts(givenBack));
        Set<Long> back = new HashSet<>();
        for (long id : returned) {
            back.add(id);
        }
        for (HeldAttempt a : givenBack) {
            if (!back.contains(a.id)) {
                continue; // Its lease had passed: the job had moved on already.
            }
            JobMdc.around(a, () -> {
                LOG.info("{}: attempt {} of {} was given back unfinished as the worker closed; the job is due"
                        + " again at once and the attempt does not count",
                        HeldAttempt.describe(a.id, a.handler.task().name(), a.queue), a.attempt, a.maxAttempts);
            });
            if (listeners.active()) {
                listeners.job(a.givenBackEvent());
            }
        }
        drop(givenBack);
    }

    private void abandon() {
        List<Outcome> rest = new ArrayList<>();
        arrived.drainTo(rest);
        rest.forEach(this::add);
        if (!nothingPending()) {
            LOG.warn("the worker closed before PostgreSQL took the outcomes of "
                    + (completions.size() + confirmations.size() + failures.size() + givenBack.size())
                    + " attempts; their jobs run again once their leases pass");
        }
        drop(completions);
        drop(confirmations);
        failures.forEach(f -> held.remove(f.attempt()));
        failures.clear();
        drop(givenBack);
        unanswered.clear();
    }
}
