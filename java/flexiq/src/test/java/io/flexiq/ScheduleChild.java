package io.flexiq;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One of the processes of {@link ScheduleTest}: declares the once-a-second schedule at a
 * wall-clock instant shared by all, closes at another, and prints how many ticks it enqueued
 * itself ("accepted N") and how many it found enqueued by another ("replayed N").
 */
public final class ScheduleChild {
    private ScheduleChild() {}

    /** Arguments: database URL, schema, declaration time and close time in epoch millis. */
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String schema = args[1];
        long startAt = Long.parseLong(args[2]);
        long stopAt = Long.parseLong(args[3]);
        AtomicInteger accepted = new AtomicInteger();
        AtomicInteger replayed = new AtomicInteger();
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).poolSize(2).build()) {
            queue.addListener(new FlexiQListener() {
                @Override
                public void onEnqueue(EnqueueEvent event) {
                    (event.outcome().orElse(null) == EnqueueOutcome.ACCEPTED ? accepted : replayed).incrementAndGet();
                }
            });
            Thread.sleep(Math.max(0, startAt - System.currentTimeMillis()));
            queue.schedule(ScheduleTest.everySecond(MissedTicks.SKIP));
            Thread.sleep(Math.max(0, stopAt - System.currentTimeMillis()));
        }
        System.out.println("accepted " + accepted.get());
        System.out.println("replayed " + replayed.get());
    }
}
