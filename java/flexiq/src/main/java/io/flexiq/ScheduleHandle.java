package io.flexiq;

/**
 * A schedule declared on a client ({@link FlexiQ#schedule(Schedule)}). Closing it stops this
 * process from enqueueing the schedule's ticks; other processes declaring it go on. Idempotent.
 */
public interface ScheduleHandle extends AutoCloseable {
    /** The schedule this handle stops. */
    Schedule<?> schedule();

    /** Stops enqueueing the schedule's ticks from this client; jobs already enqueued stay. */
    @Override
    void close();
}
