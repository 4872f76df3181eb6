package io.flexiq.internal.worker;

/**
 * Where a claim's jobs arrive, column by column: allocated once per worker, filled from the
 * start by each claim (queue and task as indexes into the worker's arrays; timeout
 * {@code Long.MIN_VALUE} when the job has none).
 */
public final class ClaimBuffer {
    final long[] ids;
    final int[] attempts;
    final int[] maxAttempts;
    final long[] timeouts;
    final int[] queueIndexes;
    final int[] taskIndexes;
    final byte[][] payloads;
    /** The id of the codec that encoded each payload, or null. */
    final String[] payloadCodecs;
    /** Microseconds from each job's due time to its claim, by PostgreSQL's clock. */
    final long[] waitedMicros;
    /** The trace context each job was enqueued in (a JSON object), or null. */
    final String[] traceContexts;

    public ClaimBuffer(int size) {
        ids = new long[size];
        attempts = new int[size];
        maxAttempts = new int[size];
        timeouts = new long[size];
        queueIndexes = new int[size];
        taskIndexes = new int[size];
        payloads = new byte[size][];
        payloadCodecs = new String[size];
        waitedMicros = new long[size];
        traceContexts = new String[size];
    }

    /** How many jobs one claim may write. */
    int size() {
        return ids.length;
    }
}
