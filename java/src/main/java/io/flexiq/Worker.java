package io.flexiq;

import io.flexiq.internal.NativeBridge;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

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
 * <p>{@link #close()} stops claiming, lets running handlers finish for up to the shutdown
 * timeout, then interrupts the rest and gives their jobs back to the queue, their unfinished
 * attempts not counted.
 */
public final class Worker implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Worker.class.getName());
    /** How long a busy worker waits for more free slots before it claims. */
    private static final long CLAIM_GATHER_MILLIS = 2;
    /** How long the first completion of a batch waits for others to join it. */
    private static final long COMPLETION_LINGER_MILLIS = 2;
    /** The most completions recorded in one statement. */
    private static final int COMPLETION_BATCH = 1_000;

    private final FlexiQ client;
    private final long handle;
    private final String[] queues;
    private final String[] tasks;
    private final Handler<?>[] handlers;
    private final int concurrency;
    private final int claimBatch;
    private final Duration lease;
    private final Duration pollInterval;
    private final Duration shutdownTimeout;

    /** Jobs this worker may hold at once: running, and claimed waiting for a thread. */
    private final int capacity;
    private final Semaphore slots;
    private final Map<Long, Running> running = new ConcurrentHashMap<>();
    private final LinkedBlockingQueue<Running> succeeded = new LinkedBlockingQueue<>();
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean claiming = new AtomicBoolean();
    /** False once no handler can succeed any more: the completer then drains and stops. */
    private final AtomicBoolean completing = new AtomicBoolean(true);
    private final AtomicBoolean closed = new AtomicBoolean();
    private final ThreadPoolExecutor handlerThreads;
    private final ScheduledExecutorService timers;
    private final Thread claimer;
    private final Thread completer;

    private Worker(Builder b) {
        this.client = b.client;
        this.handle = b.client.handle();
        this.queues = b.queues.toArray(new String[0]);
        this.tasks = b.handlers.keySet().toArray(new String[0]);
        this.handlers = b.handlers.values().toArray(new Handler<?>[0]);
        this.concurrency = b.concurrency;
        this.claimBatch = b.claimBatch;
        this.lease = b.lease;
        this.pollInterval = b.pollInterval;
        this.shutdownTimeout = b.shutdownTimeout;
        this.capacity = concurrency + b.prefetch;
        this.slots = new Semaphore(capacity);
        this.handlerThreads = new ThreadPoolExecutor(concurrency, concurrency, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), threads("flexiq-handler"));
        this.timers = Executors.newSingleThreadScheduledExecutor(threads("flexiq-lease"));
        this.claimer = threads("flexiq-claimer").newThread(this::claimLoop);
        this.completer = threads("flexiq-completer").newThread(this::completeLoop);
    }

    /**
     * Starts claiming and running jobs; returns this worker.
     *
     * @throws IllegalStateException if the worker was started before
     */
    public Worker start() {
        if (!started.compareAndSet(false, true)) {
            throw new IllegalStateException("this worker was already started");
        }
        claiming.set(true);
        long every = Math.max(1, lease.toMillis() / 3);
        timers.scheduleWithFixedDelay(this::extendLeases, every, every, TimeUnit.MILLISECONDS);
        completer.start();
        claimer.start();
        return this;
    }

    /**
     * Stops claiming, waits up to the shutdown timeout for running handlers, interrupts those
     * still running and gives their jobs back to the queue. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        claiming.set(false);
        if (started.get()) {
            NativeBridge.wakeWorkers(handle);
            join(claimer);
        }
        // Claimed jobs still waiting for a handler thread go back at once.
        List<Runnable> waiting = new ArrayList<>();
        handlerThreads.getQueue().drainTo(waiting);
        List<Running> notStarted = new ArrayList<>();
        for (Runnable r : waiting) {
            Running job = ((HandlerRun) r).job;
            if (job.settled.compareAndSet(false, true)) {
                notStarted.add(job);
            }
        }
        giveBack(notStarted);
        handlerThreads.shutdown();
        boolean finished = false;
        try {
            finished = handlerThreads.awaitTermination(shutdownTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!finished) {
            // Settled first, so that the interrupted handlers' exceptions count for nothing.
            List<Running> unfinished = settleUnfinished();
            handlerThreads.shutdownNow();
            giveBack(unfinished);
        }
        completing.set(false);
        if (started.get()) {
            join(completer);
        }
        timers.shutdownNow();
    }

    private void claimLoop() {
        int n = claimBatch;
        long[] ids = new long[n];
        int[] attempts = new int[n];
        int[] maxAttempts = new int[n];
        long[] timeouts = new long[n];
        int[] queueIndexes = new int[n];
        int[] taskIndexes = new int[n];
        byte[][] payloads = new byte[n][];
        long lastRescue = 0;
        while (claiming.get()) {
            try {
                if (System.nanoTime() - lastRescue > pollInterval.toNanos()) {
                    NativeBridge.rescueExpired(handle);
                    lastRescue = System.nanoTime();
                }
                if (!slots.tryAcquire(pollInterval.toMillis(), TimeUnit.MILLISECONDS)) {
                    continue;
                }
                int free = 1 + slots.drainPermits();
                if (free < Math.min(n, capacity) / 2) {
                    // Busy: let a few more slots free up, so that claims stay large and few.
                    Thread.sleep(CLAIM_GATHER_MILLIS);
                    free += slots.drainPermits();
                }
                int want = Math.min(free, n);
                slots.release(free - want);
                long seen = NativeBridge.workGeneration(handle);
                int got = claiming.get() ? NativeBridge.claim(handle, queues, tasks, want, lease.toMillis(), ids,
                        attempts, maxAttempts, timeouts, queueIndexes, taskIndexes, payloads) : 0;
                slots.release(want - got);
                for (int i = 0; i < got; i++) {
                    dispatch(new Running(ids[i], attempts[i], maxAttempts[i], timeouts[i], queues[queueIndexes[i]],
                            handlers[taskIndexes[i]], payloads[i]));
                    payloads[i] = null;
                }
                if (got == 0 && claiming.get()) {
                    NativeBridge.awaitWork(handle, seen, pollInterval.toMillis());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "claiming jobs failed; trying again", e);
                sleep(pollInterval);
            }
        }
    }

    private void dispatch(Running job) {
        running.put(job.id, job);
        handlerThreads.execute(new HandlerRun(job));
    }

    /** A claimed job waiting for, then running on, a handler thread. */
    private final class HandlerRun implements Runnable {
        final Running job;

        HandlerRun(Running job) {
            this.job = job;
        }

        @Override
        public void run() {
            Worker.this.run(job);
        }
    }

    private void run(Running job) {
        job.runner = Thread.currentThread();
        // The timeout counts from the handler's start, not from the claim.
        if (job.timeoutMillis != Long.MIN_VALUE) {
            job.timer = timers.schedule(() -> timeOut(job), job.timeoutMillis, TimeUnit.MILLISECONDS);
        }
        try {
            job.handler.run(client, job);
            if (job.settled.compareAndSet(false, true)) {
                succeeded.add(job);
            }
        } catch (Throwable t) {
            if (job.settled.compareAndSet(false, true)) {
                fail(job, describe(t));
            }
        } finally {
            if (job.timer != null) {
                job.timer.cancel(false);
            }
            slots.release();
        }
    }

    private void timeOut(Running job) {
        if (job.settled.compareAndSet(false, true)) {
            job.runner.interrupt();
            fail(job, "timed out after " + job.timeoutMillis + " ms");
        }
    }

    private void fail(Running job, String error) {
        try {
            NativeBridge.fail(handle, job.id, job.attempt, error);
        } catch (RuntimeException e) {
            // The lease will pass and the job will be put back to work as a failed attempt.
            LOG.log(System.Logger.Level.WARNING, "recording the failure of job " + job.id + " failed", e);
        } finally {
            running.remove(job.id);
        }
    }

    private void completeLoop() {
        List<Running> batch = new ArrayList<>();
        while (completing.get() || !succeeded.isEmpty()) {
            try {
                Running first = succeeded.poll(pollInterval.toMillis(), TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                if (succeeded.size() < claimBatch) {
                    // A moment's wait lets completions gather into fewer, larger commits.
                    Thread.sleep(COMPLETION_LINGER_MILLIS);
                }
                succeeded.drainTo(batch, COMPLETION_BATCH - 1);
                complete(batch);
                batch.clear();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void complete(List<Running> batch) {
        long[] ids = ids(batch);
        int[] attempts = attempts(batch);
        try {
            NativeBridge.complete(handle, ids, attempts);
        } catch (RuntimeException e) {
            // Leases stop being extended, and the jobs run again: at least once.
            LOG.log(System.Logger.Level.WARNING, "recording " + ids.length + " completions failed", e);
        } finally {
            for (long id : ids) {
                running.remove(id);
            }
        }
    }

    private void extendLeases() {
        List<Running> held = new ArrayList<>(running.values());
        if (held.isEmpty()) {
            return;
        }
        long[] ids = ids(held);
        int[] attempts = attempts(held);
        try {
            NativeBridge.extendLeases(handle, ids, attempts, lease.toMillis());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "extending leases failed; trying again", e);
        }
    }

    private List<Running> settleUnfinished() {
        List<Running> unfinished = new ArrayList<>();
        for (Running job : running.values()) {
            if (job.settled.compareAndSet(false, true)) {
                unfinished.add(job);
            }
        }
        return unfinished;
    }

    private void giveBack(List<Running> unfinished) {
        if (unfinished.isEmpty()) {
            return;
        }
        long[] ids = ids(unfinished);
        int[] attempts = attempts(unfinished);
        for (Running job : unfinished) {
            running.remove(job.id);
        }
        try {
            NativeBridge.returnAttempts(handle, ids, attempts);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "giving back " + ids.length + " unfinished jobs failed;"
                    + " they run again once their leases pass", e);
        }
    }

    private static long[] ids(List<Running> jobs) {
        return jobs.stream().mapToLong(job -> job.id).toArray();
    }

    private static int[] attempts(List<Running> jobs) {
        return jobs.stream().mapToInt(job -> job.attempt).toArray();
    }

    private static String describe(Throwable t) {
        String message = t.getMessage();
        return message == null ? t.getClass().getName() : t.getClass().getName() + ": " + message;
    }

    private static void join(Thread thread) {
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
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

    /** One claimed attempt on its way through the worker. */
    private static final class Running {
        final long id;
        final int attempt;
        final int maxAttempts;
        final long timeoutMillis;
        final String queue;
        final Handler<?> handler;
        final byte[] payload;
        /** Set once the attempt's outcome is decided: by the handler, its timeout, or shutdown. */
        final AtomicBoolean settled = new AtomicBoolean();
        volatile Thread runner;
        volatile ScheduledFuture<?> timer;

        Running(long id, int attempt, int maxAttempts, long timeoutMillis, String queue, Handler<?> handler,
                byte[] payload) {
            this.id = id;
            this.attempt = attempt;
            this.maxAttempts = maxAttempts;
            this.timeoutMillis = timeoutMillis;
            this.queue = queue;
            this.handler = handler;
            this.payload = payload;
        }
    }

    /** A task with its handler, which reads the payload as the task's type. */
    private record Handler<T>(Task<T> task, JobHandler<T> handler) {
        void run(FlexiQ client, Running job) throws Exception {
            T payload = client.serializer().deserialize(job.payload, task.payloadType());
            long handle = client.handle();
            JobContext.Checkpoints checkpoints = new JobContext.Checkpoints() {
                @Override
                public byte[] load(String name) {
                    return NativeBridge.checkpoint(handle, job.id, name);
                }

                @Override
                public boolean save(String name, byte[] value) {
                    return NativeBridge.saveCheckpoint(handle, job.id, job.attempt, name, value);
                }
            };
            handler.handle(payload, new JobContext(checkpoints, client.serializer(), job.id, job.attempt,
                    job.maxAttempts, job.queue, task.name()));
        }
    }

    /** Builds a {@link Worker}; see {@link FlexiQ#worker()}. */
    public static final class Builder {
        private final FlexiQ client;
        private final Map<String, Handler<?>> handlers = new LinkedHashMap<>();
        private List<String> queues = List.of("default");
        private int concurrency = 10;
        private int prefetch = -1;
        private int claimBatch = 100;
        private Duration lease = Duration.ofSeconds(30);
        private Duration pollInterval = Duration.ofSeconds(1);
        private Duration shutdownTimeout = Duration.ofSeconds(10);

        Builder(FlexiQ client) {
            this.client = client;
        }

        /**
         * Runs the jobs of {@code task} with {@code handler}.
         *
         * @throws IllegalArgumentException if the task already has a handler here
         */
        public <T> Builder handle(Task<T> task, JobHandler<T> handler) {
            Objects.requireNonNull(task, "task");
            Objects.requireNonNull(handler, "handler");
            if (handlers.putIfAbsent(task.name(), new Handler<>(task, handler)) != null) {
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

        /** The most jobs claimed in one statement (default 100). */
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
         * How long {@link Worker#close()} lets running handlers finish (default 10 s).
         *
         * @throws IllegalArgumentException unless between 0 and 1 day
         */
        public Builder shutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout = Durations.settingOrZero("shutdownTimeout", shutdownTimeout);
            return this;
        }

        /**
         * The worker, not yet started.
         *
         * @throws IllegalStateException if no task has a handler
         */
        public Worker build() {
            if (handlers.isEmpty()) {
                throw new IllegalStateException("a worker needs at least one handler");
            }
            if (prefetch < 0) {
                prefetch = concurrency;
            }
            return new Worker(this);
        }
    }
}
