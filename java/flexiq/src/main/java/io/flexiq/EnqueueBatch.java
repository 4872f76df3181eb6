package io.flexiq;

import io.flexiq.internal.NativeBridge;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Entries on their way to the native core, column by column: each entry's key is already
 * resolved here, so the native call receives the key and never the inputs it came from.
 */
final class EnqueueBatch {
    /** The native core's "not set" for the optional long columns. */
    private static final long UNSET = Long.MIN_VALUE;

    private final int size;
    private final String[] tasks;
    private final byte[][] payloads;
    private final String[] keys;
    private final String[] scopes;
    private final String[] queues;
    private final int[] priorities;
    private final long[] runAtMicros;
    private final long[] delayMillis;
    private final int[] maxAttempts;
    private final long[] retryInitialMillis;
    private final long[] retryMaxMillis;
    private final double[] retryMultipliers;
    private final double[] retryJitters;
    private final long[] timeoutMillis;
    private final String[] tags;
    private final long[] keyRetentionMillis;
    private int next;

    EnqueueBatch(int size) {
        this.size = size;
        tasks = new String[size];
        payloads = new byte[size][];
        keys = new String[size];
        scopes = new String[size];
        queues = new String[size];
        priorities = new int[size];
        runAtMicros = new long[size];
        delayMillis = new long[size];
        maxAttempts = new int[size];
        retryInitialMillis = new long[size];
        retryMaxMillis = new long[size];
        retryMultipliers = new double[size];
        retryJitters = new double[size];
        timeoutMillis = new long[size];
        tags = new String[size];
        keyRetentionMillis = new long[size];
    }

    /** Serializes the payload, resolves the key and appends the entry. */
    <T> void add(Task<T> task, T payload, EnqueueOptions options, PayloadSerializer serializer) {
        int i = next++;
        byte[] bytes = serializer.serialize(payload);
        tasks[i] = task.name();
        payloads[i] = bytes;
        keys[i] = DedupKeys.resolveOrNull(task, options, bytes);
        scopes[i] = options.scope();
        queues[i] = options.queue();
        priorities[i] = options.priority();
        runAtMicros[i] = options.runAt().map(EnqueueBatch::micros).orElse(UNSET);
        delayMillis[i] = options.delay().map(Duration::toMillis).orElse(UNSET);
        maxAttempts[i] = options.maxAttempts();
        RetryPolicy retry = options.retryPolicy();
        retryInitialMillis[i] = retry.initialDelay().toMillis();
        retryMaxMillis[i] = retry.maxDelay().toMillis();
        retryMultipliers[i] = retry.multiplier();
        retryJitters[i] = retry.jitter();
        timeoutMillis[i] = options.timeout().map(Duration::toMillis).orElse(UNSET);
        tags[i] = String.join("\0", options.tags());
        keyRetentionMillis[i] = options.keyRetention().map(Duration::toMillis).orElse(UNSET);
    }

    /** Sends the batch in one native call (one statement); results in input order. */
    List<EnqueueResult> send(long client) {
        if (next != size) {
            throw new IllegalStateException("batch has " + next + " of " + size + " entries");
        }
        long[] out = NativeBridge.enqueue(client, tasks, payloads, keys, scopes, queues, priorities,
                runAtMicros, delayMillis, maxAttempts, retryInitialMillis, retryMaxMillis, retryMultipliers,
                retryJitters, timeoutMillis, tags, keyRetentionMillis);
        List<EnqueueResult> results = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            EnqueueOutcome outcome = out[size + i] == 0 ? EnqueueOutcome.ACCEPTED : EnqueueOutcome.REPLAYED;
            results.add(new EnqueueResult(Long.toString(out[i]), outcome, null));
        }
        return results;
    }

    private static long micros(Instant at) {
        return Math.addExact(Math.multiplyExact(at.getEpochSecond(), 1_000_000L), at.getNano() / 1_000);
    }
}
