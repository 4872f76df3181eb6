package io.flexiq.internal.worker;

/**
 * What a worker registers about itself (see {@link Heartbeat}); the core adds this process's host
 * and id.
 *
 * @param startedAtMicros when it started, in microseconds since the Unix epoch
 */
public record Registration(String id, String name, String[] queues, String[] tasks, int concurrency,
        long leaseMillis, long startedAtMicros) {}
