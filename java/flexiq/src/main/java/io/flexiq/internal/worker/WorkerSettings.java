package io.flexiq.internal.worker;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ThreadFactory;

/**
 * What a worker runs and how, as its {@code Worker.Builder} checked them.
 *
 * @param queues the queues it claims from
 * @param handlers each task's handler, by task name, in the order they were given
 * @param concurrency how many handlers run at once
 * @param prefetch how many claimed jobs may wait for a handler thread; empty to follow the handlers'
 *     pace (see {@link Prefetch})
 * @param claimBatch the most jobs one claim takes
 * @param lease how long a claimed job stays the worker's without a word from it
 * @param pollInterval how often an idle worker looks for due jobs without being woken
 * @param shutdownTimeout how long closing lets running handlers finish
 * @param handlerThreads the threads handlers run on, or null for the worker's own
 */
public record WorkerSettings(List<String> queues, Map<String, TaskHandler<?>> handlers, int concurrency,
        OptionalInt prefetch, int claimBatch, Duration lease, Duration pollInterval, Duration shutdownTimeout,
        ThreadFactory handlerThreads) {}
