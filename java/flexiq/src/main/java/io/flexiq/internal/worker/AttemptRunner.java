package io.flexiq.internal.worker;

import io.flexiq.PayloadSerializer;
import io.flexiq.internal.enqueue.StoredPayloads;
import io.flexiq.internal.observability.Listeners;
import io.flexiq.internal.observability.Tracing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Runs a worker's claimed attempts on its handler threads, each under its job's timeout, and
 * hands how they ended to the {@link OutcomeRecorder}. Attempts of one job never overlap here:
 * a new attempt waits while an earlier attempt's thread still runs (a handler that ignores
 * interruption). Each attempt's slot is freed once its thread is done with it and its outcome is
 * recorded (see {@link HeldAttempts}). While a handler runs, the SLF4J MDC names its job (see
 * {@link JobMdc}), and, with tracing on, its attempt's span is current.
 */
final class AttemptRunner {
    /** The runner whose handler the current thread runs, if any. */
    private static final ThreadLocal<AttemptRunner> HANDLING = new ThreadLocal<>();

    private final WorkerStore store;
    private final StoredPayloads stored;
    private final PayloadSerializer serializer;
    /** Attempts whose lease the worker keeps; a dispatched attempt joins them. */
    private final HeldAttempts held;
    private final OutcomeRecorder outcomes;
    private final Listeners listeners;
    /** Learns how long handlers run. */
    private final Prefetch prefetch;
    /** By job id: the attempt queued for or running on a handler thread. Guarded by itself. */
    private final Map<Long, HeldAttempt> busy = new LinkedHashMap<>();
    /** By job id: a new attempt waiting for an earlier attempt's thread to end. Guarded by {@link #busy}. */
    private final Map<Long, HeldAttempt> deferred = new LinkedHashMap<>();
    private final ThreadPoolExecutor handlerThreads;
    /** Only interrupts: never waits on PostgreSQL, so timeouts fire whatever the database does. */
    private final ScheduledExecutorService timeouts;

    AttemptRunner(WorkerStore store, StoredPayloads stored, PayloadSerializer serializer, HeldAttempts held,
            OutcomeRecorder outcomes, Listeners listeners, Prefetch prefetch, int concurrency, ThreadFactory handlerThreads,
            ThreadFactory timeoutThread) {
        this.store = store;
        this.stored = stored;
        this.serializer = serializer;
        this.held = held;
        this.outcomes = outcomes;
        this.listeners = listeners;
        this.prefetch = prefetch;
        this.handlerThreads = new ThreadPoolExecutor(concurrency, concurrency, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), handlerThreads);
        this.timeouts = Executors.newSingleThreadScheduledExecutor(timeoutThread);
    }

    /** Whether the calling thread is running one of this runner's handlers. */
    boolean onHandlerThread() {
        return HANDLING.get() == this;
    }

    /** Takes a claimed attempt: runs it, or defers it while an earlier attempt's thread runs. */
    void dispatch(HeldAttempt a) {
        held.add(a);
        synchronized (busy) {
            if (busy.containsKey(a.id)) {
                deferred.put(a.id, a);
                return;
            }
            busy.put(a.id, a);
        }
        execute(a);
    }

    /**
     * Shutting down: starts no more attempts, and gives back at once those still waiting for a
     * handler thread.
     */
    void giveBackWaiting() {
        List<HeldAttempt> waiting = new ArrayList<>();
        List<Runnable> queued = new ArrayList<>();
        handlerThreads.getQueue().drainTo(queued);
        synchronized (busy) {
            for (Runnable r : queued) {
                waiting.add(busy.remove(((HandlerRun) r).attempt.id));
            }
            waiting.addAll(deferred.values());
            deferred.clear();
        }
        outcomes.giveBack(settled(waiting));
        waiting.forEach(held::handlerDone);
        handlerThreads.shutdown();
    }

    /**
     * Shutting down, after {@link #giveBackWaiting()}: waits up to {@code timeout} for running
     * handlers, then gives back the attempts of those still running and interrupts them.
     */
    void finish(Duration timeout) {
        if (!awaitHandlers(timeout)) {
            List<HeldAttempt> unfinished;
            synchronized (busy) {
                unfinished = new ArrayList<>(busy.values());
            }
            // Settled first, so that the interrupted handlers' exceptions count for nothing.
            outcomes.giveBack(settled(unfinished));
            handlerThreads.shutdownNow();
        }
        // Every attempt is settled now: a timeout left would find nothing to fail.
        timeouts.shutdownNow();
    }

    private boolean awaitHandlers(Duration timeout) {
        try {
            return handlerThreads.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Those of {@code attempts} whose outcome this call decides. */
    private static List<HeldAttempt> settled(List<HeldAttempt> attempts) {
        List<HeldAttempt> mine = new ArrayList<>();
        for (HeldAttempt a : attempts) {
            if (a.settle()) {
                mine.add(a);
            }
        }
        return mine;
    }

    private void execute(HeldAttempt a) {
        try {
            handlerThreads.execute(new HandlerRun(a));
        } catch (RejectedExecutionException e) {
            // Closing: the job goes back.
            synchronized (busy) {
                busy.remove(a.id);
            }
            outcomes.giveBack(settled(List.of(a)));
            held.handlerDone(a);
        }
    }

    /** A claimed attempt waiting for, then running on, a handler thread. */
    private final class HandlerRun implements Runnable {
        final HeldAttempt attempt;

        HandlerRun(HeldAttempt attempt) {
            this.attempt = attempt;
        }

        @Override
        public void run() {
            AttemptRunner.this.run(attempt);
        }
    }

    private void run(HeldAttempt a) {
        Throwable failure = null;
        boolean ran = false;
        ScheduledFuture<?> timer = null;
        HANDLING.set(this);
        Duration waited = a.startRunning(Thread.currentThread());
        if (listeners.active() && !a.settled()) {
            listeners.job(a.startedEvent(waited));
        }
        JobMdc named = JobMdc.of(a);
        Tracing tracing = listeners.tracing();
        Tracing.AttemptSpan span = tracing == null || a.settled() ? null
                : tracing.attempt(a.handler.task().name(), a.queue, a.id, a.attempt, a.maxAttempts, a.traceContext);
        try {
            // The timeout counts from the handler's start, not from the claim.
            if (a.timeoutMillis != HeldAttempt.NO_TIMEOUT) {
                timer = timeouts.schedule(() -> timeOut(a), a.timeoutMillis, TimeUnit.MILLISECONDS);
            }
            if (!a.settled()) {
                ran = true;
                a.handler.run(stored, serializer, store, a);
            }
        } catch (Throwable t) {
            failure = t;
        } finally {
            if (timer != null) {
                timer.cancel(false);
            }
            long handlerNanos = a.stopRunning();
            if (ran) {
                prefetch.handled(handlerNanos);
            }
            if (span != null) {
                span.end(failure);
            }
            // An interrupt meant for this attempt must not reach the thread's next job.
            Thread.interrupted();
            HANDLING.remove();
            named.close();
        }
        if (a.settle()) {
            if (failure == null && a.isCompletedInTransaction()) {
                outcomes.completedInTransaction(a);
            } else if (failure == null) {
                outcomes.succeeded(a);
            } else {
                outcomes.failed(a, describe(failure), failure);
            }
        }
        HeldAttempt next;
        synchronized (busy) {
            busy.remove(a.id);
            next = deferred.remove(a.id);
            if (next != null) {
                busy.put(next.id, next);
            }
        }
        if (next != null) {
            execute(next);
        }
        held.handlerDone(a);
    }

    private void timeOut(HeldAttempt a) {
        if (a.settle()) {
            a.interruptIfRunning();
            outcomes.failed(a, "timed out after " + a.timeoutMillis + " ms", null);
        }
    }

    private static String describe(Throwable t) {
        String message = t.getMessage();
        return message == null ? t.getClass().getName() : t.getClass().getName() + ": " + message;
    }
}
