package io.flexiq.internal.worker;

import io.flexiq.PayloadSerializer;
import io.flexiq.Worker;
import io.flexiq.internal.NativeBridge;
import io.flexiq.internal.enqueue.StoredPayloads;
import io.flexiq.internal.observability.Listeners;
import io.flexiq.internal.observability.Trouble;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a {@link Worker} runs: its parts, wired together, started and stopped in order. The
 * {@link Claimer} claims, the {@link AttemptRunner} runs the claimed attempts, the
 * {@link LeaseKeeper} keeps their leases and the {@link OutcomeRecorder} records how they ended;
 * they reach PostgreSQL only through the {@link WorkerStore}. Its {@link Heartbeat} keeps its
 * registration, which operators list.
 */
public final class WorkerEngine {
    /** Numbers workers, so that each one's threads can be told apart by name. */
    private static final AtomicInteger WORKERS = new AtomicInteger();
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    /**
     * How many claims' worth of attempts, their handlers done, may wait for their outcomes to be
     * recorded before the worker stops claiming: with one, a claim often waited for the last
     * completion to commit; with a few, they overlap, and a slow database still stops the claims.
     */
    private static final int UNRECORDED_CLAIMS = 4;

    private final WorkerStore store;
    /** Run once the worker has stopped: its client forgets it. */
    private final Runnable stopped;
    /** The prefix of this worker's thread names. */
    private final String name;
    private final Duration shutdownTimeout;
    /** What it runs, for its log lines. */
    private final String settings;
    private final Heartbeat heartbeat;
    private final LeaseKeeper leases;
    private final OutcomeRecorder outcomes;
    private final AttemptRunner runner;
    private final Claimer claimer;
    private final Thread claimerThread;
    private final Thread outcomeThread;
    private final Object lifecycle = new Object();
    private boolean started;
    private boolean closed;

    /**
     * A worker of a client whose payloads are stored as {@code stored} says and serialized by
     * {@code serializer}, whose events go to {@code listeners} and whose outage is
     * {@code outage}; {@code stopped} runs once it has stopped.
     */
    public WorkerEngine(WorkerSettings s, WorkerStore store, StoredPayloads stored, PayloadSerializer serializer,
            Listeners listeners, Trouble outage, Runnable stopped) {
        this.store = store;
        this.stopped = stopped;
        this.name = "flexiq-worker-" + WORKERS.incrementAndGet();
        this.shutdownTimeout = s.shutdownTimeout();
        Prefetch prefetch = s.prefetch().isPresent() ? Prefetch.fixed(s.concurrency(), s.prefetch().getAsInt())
                : Prefetch.adaptive(s.concurrency(), s.claimBatch());
        this.settings = "queues " + s.queues() + ", tasks " + s.handlers().keySet() + ", concurrency "
                + s.concurrency() + ", prefetch " + prefetch + ", lease " + s.lease().toMillis() + " ms";
        Slots slots = new Slots(s.concurrency() + prefetch.now());
        Semaphore unrecorded = new Semaphore(s.concurrency() + prefetch.most() + UNRECORDED_CLAIMS * s.claimBatch());
        HeldAttempts held = new HeldAttempts(slots, unrecorded);
        this.leases = new LeaseKeeper(store, held, s.lease().toMillis(), threads(name + "-lease"), outage);
        this.outcomes = new OutcomeRecorder(store, held, listeners, outage);
        this.runner = new AttemptRunner(store, stored, serializer, held, outcomes, listeners, prefetch,
                s.concurrency(), s.handlerThreads() != null ? s.handlerThreads() : threads(name + "-handler"),
                threads(name + "-timeouts"));
        String[] tasks = s.handlers().keySet().toArray(new String[0]);
        this.claimer = new Claimer(store, s.queues().toArray(new String[0]), tasks,
                s.handlers().values().toArray(new TaskHandler<?>[0]), s.claimBatch(), s.concurrency(), prefetch, slots,
                unrecorded, s.lease().toMillis(), s.pollInterval().toMillis(), runner::dispatch, leases::extend,
                listeners, outage);
        this.heartbeat = new Heartbeat(store, new Registration(UUID.randomUUID().toString(), name,
                s.queues().toArray(new String[0]), tasks, s.concurrency(), s.lease().toMillis(),
                NativeBridge.micros(Instant.now())), threads(name + "-heartbeat"), outage);
        this.claimerThread = threads(name + "-claimer").newThread(claimer);
        this.outcomeThread = threads(name + "-outcomes").newThread(outcomes);
    }

    /**
     * Starts claiming and running jobs.
     *
     * @throws IllegalStateException if it was started before, or is closed
     */
    public void start() {
        synchronized (lifecycle) {
            if (closed) {
                throw new IllegalStateException("this worker is closed; build a new one from an open client");
            }
            if (started) {
                throw new IllegalStateException("this worker was already started");
            }
            started = true;
        }
        heartbeat.start();
        leases.start();
        outcomeThread.start();
        claimerThread.start();
        LOG.info("{} started: {}", name, settings);
    }

    /**
     * Stops claiming, waits up to the shutdown timeout for running handlers, interrupts those
     * still running and gives their jobs back; idempotent, and never throws. Called from one of
     * its own handlers, it stops on another thread and returns at once.
     */
    public void close() {
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (runner.onHandlerThread()) {
            threads(name + "-close").newThread(this::shutDown).start();
        } else {
            shutDown();
        }
    }

    private void shutDown() {
        boolean wasStarted;
        synchronized (lifecycle) {
            wasStarted = started;
        }
        if (wasStarted) {
            LOG.info("{} stopping: no more claims; running handlers get up to {} ms to finish", name,
                    shutdownTimeout.toMillis());
        }
        claimer.stop();
        if (wasStarted) {
            try {
                store.wakeWorkers();
            } catch (RuntimeException e) {
                // The claimer then notices within its poll interval.
            }
            join(claimerThread);
            claimer.recoverUnresolved(a -> outcomes.giveBack(List.of(a)));
        }
        runner.giveBackWaiting();
        runner.finish(shutdownTimeout);
        outcomes.stop(System.nanoTime() + shutdownTimeout.toNanos());
        if (wasStarted) {
            join(outcomeThread);
        }
        leases.stop();
        heartbeat.stop();
        stopped.run();
        if (wasStarted) {
            LOG.info("{} stopped", name);
        }
    }

    /** The worker's name, which its threads' names start with: {@code flexiq-worker-<n>}. */
    @Override
    public String toString() {
        return name;
    }

    private static void join(Thread thread) {
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Sleeps; false if interrupted (the interrupt is kept). */
    static boolean sleep(long millis) {
        try {
            Thread.sleep(millis);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static ThreadFactory threads(String prefix) {
        AtomicInteger next = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + next.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
