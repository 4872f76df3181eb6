package io.flexiq;

import java.time.Instant;

/**
 * Jobs of a queue that finished within one minute (see {@link FlexiQ#throughput}).
 *
 * @param queue the queue
 * @param minute the minute's start (UTC, whole minutes)
 * @param completed jobs that completed in it
 * @param dead jobs dead-lettered in it
 */
public record Throughput(String queue, Instant minute, long completed, long dead) {}
