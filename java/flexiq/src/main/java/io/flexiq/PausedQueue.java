package io.flexiq;

import java.time.Instant;

/**
 * A paused queue (see {@link FlexiQ#pauseQueue(String)}): its jobs wait, unclaimed, until it is
 * resumed.
 *
 * @param queue the queue
 * @param pausedAt when it was paused, as PostgreSQL's clock had it
 */
public record PausedQueue(String queue, Instant pausedAt) {}
