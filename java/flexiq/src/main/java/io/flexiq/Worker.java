package io.flexiq;

import io.flexiq.internal.Durations;
import io.flexiq.internal.Limits;
import io.flexiq.internal.worker.NativeWorkerStore;
import io.flexiq.internal.worker.TaskHandler;
import io.flexiq.internal.worker.WorkerEngine;
import io.flexiq.internal.worker.WorkerSettings;
import io.flexiq.internal.worker.WorkerStore;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.concurrent.ThreadFactory;

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
 * <p>While PostgreSQL is unavailable, a worker keeps what it knows: outcomes of finished handlers
 * wait and are recorded once PostgreSQL is back, and jobs whose claim's answer was lost are found
 * again by the claim's token and run. Back in touch, the worker extends its leases before it
 * claims anything. An outcome that arrives after its lease passed and a rescue moved the job is
 * still recorded while no later attempt of the job has started; and after a restart of
 * PostgreSQL, leases that passed while it was down are rescued only a lease after it started.
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
    private final WorkerEngine engine;

    private Worker(Builder b, WorkerStore store) {
        FlexiQ client = b.client;
        this.engine = new WorkerEngine(b.settings(), store, client.storedPayloads(), client.serializer(),
                client.listeners(), client.outage(), () -> client.forget(this));
    }

    /**
     * Starts claiming and running jobs; returns this worker.
     *
     * @throws IllegalStateException if the worker was started before, or is closed (closing its
     *     client closes it too)
     */
    public Worker start() {
        engine.start();
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
        engine.close();
    }

    /** The worker's name, which its threads' names start with: {@code flexiq-worker-<n>}. */
    @Override
    public String toString() {
        return engine.toString();
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
         * How many claimed jobs may wait for a free handler thread, their leases held. Waiting
         * jobs let busy threads go from job to job without a round trip, and larger claims cost
         * PostgreSQL less per job; a worker that is closed gives them back at once. By default it
         * follows the handlers' pace: as many jobs as the handlers finish in about 50 ms, at
         * least {@code concurrency} and at most {@code claimBatch} (or {@code concurrency}, if
         * larger), so that quick jobs are claimed a hundred at a time while slow ones stay
         * shared among workers. Set, it is fixed: {@code 0} claims only for idle threads.
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
            Worker worker = new Worker(this, store);
            client.register(worker);
            return worker;
        }

        private WorkerSettings settings() {
            return new WorkerSettings(queues, handlers, concurrency,
                    prefetch < 0 ? OptionalInt.empty() : OptionalInt.of(prefetch), claimBatch, lease, pollInterval,
                    shutdownTimeout, handlerThreads);
        }
    }
}
