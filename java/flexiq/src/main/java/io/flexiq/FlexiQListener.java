package io.flexiq;

/**
 * Hears what a {@link FlexiQ} client and its workers do: enqueue outcomes and job state
 * changes. Set with {@link FlexiQ.Builder#listener} or {@link FlexiQ#addListener}.
 *
 * <p>Each listener gets its events in order on a thread of its own, after the fact, so a slow
 * or throwing listener never holds up an enqueue or a worker: a listener that falls more than
 * 10,000 events behind loses the newest ones, and its exceptions are logged (both at most once
 * a minute). Events name keys only by preview and SHA-256, never the raw key.
 */
public interface FlexiQListener {
    /** An enqueue was decided: a job accepted, a key replayed, or a conflict refused. */
    default void onEnqueue(EnqueueEvent event) {}

    /**
     * A job changed state: started, completed, retried, dead-lettered, rescued, recorded late,
     * given back, redriven, cancelled or purged (see {@link JobEvent.Kind}).
     */
    default void onJob(JobEvent event) {}
}
