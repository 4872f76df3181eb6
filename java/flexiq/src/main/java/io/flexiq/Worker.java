package io.flexiq;

import io.flexiq.internal.Durations;
import io.flexiq.internal.Limits;
import io.flexiq.internal.observability.Trouble;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs jobs on Java threads: claims due jobs of its queues and tasks in batches (PostgreSQL's
 * {@code FOR UPDATE SKIP LOCKED}, by priority then due time), runs each on a handler thread
 * under a lease that it extends while the handler runs, and records how the attempt ended.
 *
 * <pre>{@code
 * try (Worker worker = queue.worker()
 *         .handle(CHARGE_CUSTOMER, (order, job) -> payments.charge(order, job.jobId()))
 *         .concurrency(8)
 *         .build()
 *         .start()) {
 *     ...
 * }
 * }</pre>
 *
 * <p>Delivery is at least once. A worker that dies mid-attempt loses its lease; once the lease
 * has passed, another worker puts the job back to work as a failed attempt and runs it again.
 * Idle workers wake on PostgreSQL notifications of new due jobs and poll as well.
 *
 * <p>While PostgreSQL is briefly unavailable, a worker keeps what it knows: outcomes of finished
 * handlers wait and are recorded once PostgreSQL is back, and jobs whose claim's answer was lost
 * are found again by the claim's token and run. Neither reruns a finished handler nor spends an
 * attempt, as long as the outage is shorter than the lease.
 *
 * <p>A handler that runs past its job's timeout is interrupted, and the attempt fails at once.
 * A new attempt of the same job never starts in this worker while an earlier attempt's thread
 * is still running (a handler that ignores interruption); it waits for that thread. Another
 * process may run the new attempt meanwhile: handlers must stop when interrupted.
 *
 * <p>{@link #close()} stops claiming, lets running handlers finish for up to the shutdown
 * timeout, then interrupts the rest and gives their jobs back to the queue, their unfinished
 * attempts not counted. Closing the {@link FlexiQ} client closes its workers first.
 */
public final class Worker implements AutoCloseable {
    /** Numbers workers, so that each one's threads can be told apart by name. */
    private static final AtomicInteger WORKERS = new AtomicInteger();
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    /**
     * How many claims' worth of attempts, their handlers done, may wait for their outcomes to be
     * recorded before the worker stops claiming: with one, a claim often waited for the last
     * completion to commit; with a few, they overlap, and a slow database still stops the claims.
     */
    private static final int UNRECORDED_CLAIMS = 4;

    private final FlexiQ client;
    private final WorkerStore store;
    /** The prefix of this worker's thread names. */
    private final String name;
    private final Duration shutdownTimeout;
    /** What it runs, for its log lines. */
    private final String settings;
    private final LeaseKeeper leases;
    private final OutcomeRecorder outcomes;
    private final AttemptRunner runner;
    private final Claimer claimer;
    private final Thread claimerThread;
    private final Thread outcomeThread;
    private final Object lifecycle = new Object();
    private boolean started;
    private boolean closed;

    private Worker(Builder b, WorkerStore store) {
        this.client = b.client;
        this.store = store;
        this.name = "flexiq-worker-" + WORKERS.incrementAndGet();
        this.shutdownTimeout = b.shutdownTimeout;
        this.settings = "queues " + b.queues + ", tasks " + b.handlers.keySet() + ", concurrency " + b.concurrency
                + ", prefetch " + b.prefetch + ", lease " + b.lease.toMillis() + " ms";
        int capacity = b.concurrency + b.prefetch;
        Semaphore slots = new Semaphore(capacity);
        Semaphore unrecorded = new Semaphore(capacity + UNRECORDED_CLAIMS * b.claimBatch);
        HeldAttempts held = new HeldAttempts(slots, unrecorded);
        Trouble outage = b.client.outage();
        this.leases = new LeaseKeeper(store, held, b.lease.toMillis(), threads(name + "-lease"), outage);
        this.outcomes = new OutcomeRecorder(store, held, b.client.listeners(), outage);
        this.runner = new AttemptRunner(store, b.client.storedPayloads(), b.client.serializer(), held, outcomes, b.client.listeners(),
                b.concurrency, b.handlerThreads != null ? b.handlerThreads : threads(name + "-handler"),
                threads(name + "-timeouts"));
        String[] tasks = b.handlers.keySet().toArray(new String[0]);
        this.claimer = new Claimer(store, b.queues.toArray(new String[0]), tasks,
                b.handlers.values().toArray(new TaskHandler<?>[0]), b.claimBatch, capacity, slots,
                unrecorded, b.lease.toMillis(), b.pollInterval.toMillis(), runner::dispatch, b.client.listeners(),
                outage);
        this.claimerThread = threads(name + "-claimer").newThread(claimer);
        this.outcomeThread = threads(name + "-outcomes").newThread(outcomes);
    }

    /**
     * Starts claiming and running jobs; returns this worker.
     *
     * @throws IllegalStateException if the worker was started before, or is closed (closing its
     *     client closes it too)
     */
    public Worker start() {
        synchronized (lifecycle) {
            if (closed) {
                throw new IllegalStateException("this worker is closed; build a new one from an open client");
            }
            if (started) {
                throw new IllegalStateException("this worker was already started");
            }
            started = true;
        }
        leases.start();
        outcomeThread.start();
        claimerThread.start();
        LOG.info("{} started: {}", name, settings);
        return this;
    }

    /**
     * Stops claiming, waits up to the shutdown timeout for running handlers, interrupts those
     * still running and gives their jobs back to the queue. Idempotent, and never throws.
     *
     * <p>Called from one of this worker's own handlers, it starts the shutdown on another thread
     * and returns at once, so that the calling handler can return and its job complete.
     */
    @Override
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
        client.forget(this);
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

    /** Builds a {@link Worker}; see {@link FlexiQ#worker()}. */
    public static final class Builder {
        private final FlexiQ client;
        private final Map<String, TaskHandler<?>> handlers = new LinkedHashMap<>();
        private List<String> queues = List.of("default");
        private int concurrency = 10;
        private int prefetch = -1;
        private int claimBatch = 100;
        private Duration lease = Duration.ofSeconds(30);
        private Duration pollInterval = Duration.ofSeconds(1);
        private Duration shutdownTimeout = Duration.ofSeconds(10);
        private ThreadFactory handlerThreads;

        Builder(FlexiQ client) {
            this.client = client;
        }

        /**
         * Runs the jobs of {@code task} with {@code handler}.
         *
         * @throws IllegalArgumentException if the task is null or already has a handler here
         */
        public <T> Builder handle(Task<T> task, JobHandler<T> handler) {
            Task.require(task);
            Objects.requireNonNull(handler, "handler");
            if (handlers.putIfAbsent(task.name(), new TaskHandler<>(task, handler)) != null) {
                throw new IllegalArgumentException("task " + task.name() + " already has a handler");
            }
            return this;
        }

        /**
         * The queues to take jobs from (default {@code "default"}).
         *
         * @throws IllegalArgumentException if a name is empty, over 128 bytes of UTF-8, contains NUL
         *     or is not valid UTF-16
         */
        public Builder queues(String... queues) {
            if (queues.length == 0) {
                throw new IllegalArgumentException("a worker needs at least one queue");
            }
            for (String q : queues) {
                Limits.name("queue", q);
            }
            this.queues = List.of(queues);
            return this;
        }

        /** How many jobs run at once (default 10). */
        public Builder concurrency(int concurrency) {
            if (concurrency < 1) {
                throw new IllegalArgumentException("concurrency must be at least 1, got " + concurrency);
            }
            this.concurrency = concurrency;
            return this;
        }

        /**
         * How many claimed jobs may wait for a free handler thread, their leases held (default:
         * as many as {@code concurrency}). Waiting jobs let busy threads go from job to job
         * without a round trip; a worker that is closed gives them back at once.
         */
        public Builder prefetch(int prefetch) {
            if (prefetch < 0) {
                throw new IllegalArgumentException("prefetch must not be negative, got " + prefetch);
            }
            this.prefetch = prefetch;
            return this;
        }

        /**
         * The most jobs claimed in one statement (default 100). As many jobs whose handlers
         * returned may wait for their outcomes to commit, their leases held, while the next claim
         * goes out; beyond that, the worker claims only as outcomes are recorded.
         */
        public Builder claimBatch(int claimBatch) {
            if (claimBatch < 1) {
                throw new IllegalArgumentException("claimBatch must be at least 1, got " + claimBatch);
            }
            this.claimBatch = claimBatch;
            return this;
        }

        /**
         * How long a claimed job stays this worker's without a word from it (default 30 s). The
         * worker extends the lease every third of it while the handler runs; a worker that dies
         * loses its jobs to other workers once their leases pass.
         *
         * @throws IllegalArgumentException unless between 1 ms and 1 day
         */
        public Builder lease(Duration lease) {
            this.lease = Durations.setting("lease", lease);
            return this;
        }

        /**
         * How often an idle worker looks for due jobs without being woken (default 1 s).
         *
         * @throws IllegalArgumentException unless between 1 ms and 1 day
         */
        public Builder pollInterval(Duration pollInterval) {
            this.pollInterval = Durations.setting("pollInterval", pollInterval);
            return this;
        }

        /**
         * How long {@link Worker#close()} lets running handlers finish (default 10 s); their
         * outcomes then get as long again to reach PostgreSQL, which matters only while it is
         * unreachable.
         *
         * @throws IllegalArgumentException unless between 0 and 1 day
         */
        public Builder shutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout = Durations.settingOrZero("shutdownTimeout", shutdownTimeout);
            return this;
        }

        /**
         * The threads handlers run on (default: platform daemon threads named
         * {@code flexiq-worker-<n>-handler-<i>}). The worker keeps {@code concurrency} of them.
         * On Java 21 and later, {@code Thread.ofVirtual().name("jobs-", 0).factory()} runs each
         * handler on a virtual thread, so that a worker with a high concurrency runs as many
         * handlers that wait (on I/O, on sleep) at once without as many platform threads.
         */
        public Builder handlerThreads(ThreadFactory handlerThreads) {
            this.handlerThreads = Objects.requireNonNull(handlerThreads, "handlerThreads");
            return this;
        }

        /**
         * The worker, not yet started.
         *
         * @throws IllegalStateException if no task has a handler, or the client is closed
         */
        public Worker build() {
            return build(new NativeWorkerStore(client.handle()));
        }

        /** The worker, calling PostgreSQL through {@code store}. */
        Worker build(WorkerStore store) {
            if (handlers.isEmpty()) {
                throw new IllegalStateException("a worker needs at least one handler");
            }
            if (prefetch < 0) {
                prefetch = concurrency;
            }
            Worker worker = new Worker(this, store);
            client.register(worker);
            return worker;
        }
    }
}
