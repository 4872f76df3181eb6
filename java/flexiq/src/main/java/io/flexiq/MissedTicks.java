package io.flexiq;

/**
 * What a {@link Schedule} does about ticks that passed while no process declaring it was running
 * (a deployment, an outage of every instance).
 */
public enum MissedTicks {
    /**
     * Enqueues the latest tick at or before the declaration once, then follows the schedule (the
     * default). Earlier missed ticks are not made up for. If another process already enqueued that
     * tick, the enqueue replays it and nothing new is written.
     */
    LATEST,
    /** Enqueues nothing for past ticks: the first tick enqueued is the first one after the declaration. */
    SKIP
}
