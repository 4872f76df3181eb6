package io.flexiq;

import io.flexiq.internal.worker.AttemptStore;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Test mode: a {@link JobQueue} that runs each job's handler at once, on the calling thread,
 * without storage and without the native library, so it runs on any platform. For unit tests of
 * code that enqueues; for tests that need the real thing, {@code io.flexiq:flexiq-test} gives
 * each test class a {@link FlexiQ} on a real PostgreSQL.
 *
 * <pre>{@code
 * TestQueue queue = TestQueue.create().handle(CHARGE_CUSTOMER, (order, job) -> charged.add(order));
 * checkout.placeOrder(queue, order);   // the handler has run when this returns
 * }</pre>
 *
 * <p>What differs from {@link FlexiQ}, on purpose:
 * <ul>
 *   <li>Dedup is a no-op: keys are not resolved and no binding is kept (an
 *       {@code idempotencyKey}'s 24 hours included), every enqueue runs its handler and is
 *       {@link EnqueueOutcome#ACCEPTED} with a new id, and no conflict is ever raised.</li>
 *   <li>Scheduled jobs (runAt, delay) run at once; there are no retries: the handler runs once,
 *       as attempt 1, and its exception reaches the caller as a {@link FlexiQException}.</li>
 *   <li>Payloads still go through Jackson both ways, so a payload that would not serialize
 *       fails here as it would in production; the native rewrite to canonical JSON is skipped,
 *       so its refusals (integers beyond 2^53, inexact decimals) show only against
 *       {@link FlexiQ}. Checkpoints live in memory, those stored on a connection too, and
 *       {@link JobContext#completeIn} runs nothing on its connection: the job completes as its
 *       handler returns.</li>
 * </ul>
 */
public final class TestQueue implements JobQueue {
    private final PayloadSerializer serializer;
    private final Map<String, Registered<?>> handlers = new ConcurrentHashMap<>();
    private final AtomicLong nextId = new AtomicLong();

    private TestQueue(PayloadSerializer serializer) {
        this.serializer = serializer;
    }

    /** A test queue with the default serializer's Jackson mapping, which needs no native library. */
    public static TestQueue create() {
        return new TestQueue(CanonicalJsonSerializer.withoutNativeCore());
    }

    /** A test queue with the given serializer. */
    public static TestQueue create(PayloadSerializer serializer) {
        return new TestQueue(Objects.requireNonNull(serializer, "serializer"));
    }

    /**
     * Runs the jobs of {@code task} with {@code handler}; replaces an earlier handler of the task.
     *
     * @return this queue
     * @throws IllegalArgumentException if the task is null
     */
    public <T> TestQueue handle(Task<T> task, JobHandler<T> handler) {
        Task.require(task);
        handlers.put(task.name(), new Registered<>(task, Objects.requireNonNull(handler, "handler")));
        return this;
    }

    /**
     * Runs the job's handler now and returns once it has.
     *
     * @throws IllegalStateException if the task has no handler here
     * @throws FlexiQException if the handler throws (the exception is its cause)
     */
    @Override
    public <T> EnqueueResult enqueueWithResult(Task<T> task, T payload, EnqueueOptions options) {
        Task.require(task);
        Objects.requireNonNull(options, "options");
        Registered<?> registered = handlers.get(task.name());
        if (registered == null) {
            throw new IllegalStateException("no handler for task " + task.name() + " in this test queue");
        }
        long id = nextId.incrementAndGet();
        byte[] bytes = serializer.serialize(payload);
        try {
            registered.run(serializer, bytes, new JobContext(new InMemoryAttempt(), serializer, id, 1,
                    options.maxAttempts(), options.queue(), task.name()));
        } catch (Exception e) {
            throw new FlexiQException("handler of task " + task.name() + " failed on job " + id + ": " + e, e);
        }
        return new EnqueueResult(Long.toString(id), EnqueueOutcome.ACCEPTED, null);
    }

    /** Runs each entry's handler in turn; see {@link #enqueueWithResult(Task, Object, EnqueueOptions)}. */
    @Override
    public <T> List<String> enqueueMany(Task<T> task, List<? extends T> payloads, EnqueueOptions options) {
        Task.require(task);
        List<String> ids = new ArrayList<>(Objects.requireNonNull(payloads, "payloads").size());
        for (T payload : payloads) {
            ids.add(enqueueWithResult(task, payload, options).jobId());
        }
        return ids;
    }

    /** Runs each entry's handler in turn; see {@link #enqueueWithResult(Task, Object, EnqueueOptions)}. */
    @Override
    public List<EnqueueResult> enqueueManyWithResults(List<? extends EnqueueRequest<?>> requests) {
        List<EnqueueResult> results = new ArrayList<>(EnqueueRequest.requireEntries(requests).size());
        for (EnqueueRequest<?> request : requests) {
            results.add(enqueue(request));
        }
        return results;
    }

    private <T> EnqueueResult enqueue(EnqueueRequest<T> request) {
        return enqueueWithResult(request.task(), request.payload(), request.options());
    }

    /** A handler with its task, reading payloads as the task's type. */
    private record Registered<T>(Task<T> task, JobHandler<T> handler) {
        void run(PayloadSerializer serializer, byte[] payload, JobContext context) throws Exception {
            handler.handle(serializer.deserialize(payload, task.payloadType()), context);
        }
    }

    /**
     * One job's only attempt: its checkpoints kept for as long as it runs, those stored on a
     * connection too (nothing is run on the connection), and its completion in a transaction
     * left to the handler's return.
     */
    private static final class InMemoryAttempt implements AttemptStore {
        private final Map<String, byte[]> values = new HashMap<>();

        @Override
        public byte[] load(String name) {
            return values.get(name);
        }

        @Override
        public boolean save(String name, byte[] value) {
            values.put(name, value);
            return true;
        }

        @Override
        public boolean saveIn(Connection connection, String name, byte[] value) {
            return save(name, value);
        }

        @Override
        public void completesInTransaction() {
            // The job completes as the handler returns, whatever its transactions did.
        }

        @Override
        public boolean completeIn(Connection connection) {
            return true;
        }
    }
}
