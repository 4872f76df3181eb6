package io.flexiq;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One of the processes of {@link ScheduleTest}: once connected, prints "ready" and reads a
 * declaration time and a close time in epoch millis from its input, shared by all; declares
 * the once-a-second schedule at the one, closes at the other, and prints how many ticks it
 * enqueued itself ("accepted N") and how many it found enqueued by another ("replayed N").
 */
public final class ScheduleChild {
    private ScheduleChild() {}

    /** Arguments: database URL, schema. */
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String schema = args[1];
        AtomicInteger accepted = new AtomicInteger();
        AtomicInteger replayed = new AtomicInteger();
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).poolSize(2).build()) {
            queue.addListener(new FlexiQListener() {
                @Override
                public void onEnqueue(EnqueueEvent event) {
                    (event.outcome().orElse(null) == EnqueueOutcome.ACCEPTED ? accepted : replayed).incrementAndGet();
                }
            });
            System.out.println("ready");
            System.out.flush();
            String[] instants = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
                    .readLine().trim().split(" ");
            long startAt = Long.parseLong(instants[0]);
            long stopAt = Long.parseLong(instants[1]);
            // Wall-clock instants shared by every process: real time must pass to reach them.
            Thread.sleep(Math.max(0, startAt - System.currentTimeMillis()));
            queue.schedule(ScheduleTest.everySecond(MissedTicks.SKIP));
            Thread.sleep(Math.max(0, stopAt - System.currentTimeMillis()));
        }
        System.out.println("accepted " + accepted.get());
        System.out.println("replayed " + replayed.get());
    }
}
