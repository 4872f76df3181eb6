package io.flexiq;

import java.io.PrintStream;
import java.time.Duration;

/**
 * A process taking part in its schema's maintenance, for {@link MaintenanceTest}: builds a
 * worker (which enables maintenance), then prints "elected true" or "elected false" each time
 * its client starts or stops running maintenance, until it is killed.
 */
public final class MaintenanceChild {
    private MaintenanceChild() {}

    /** Arguments: database URL, schema. */
    public static void main(String[] args) throws Exception {
        PrintStream out = System.out;
        Maintenance maintenance = Maintenance.builder().interval(Duration.ofMillis(200)).build();
        try (FlexiQ queue = FlexiQ.builder(args[0]).schema(args[1]).poolSize(2).maintenance(maintenance).build()) {
            queue.worker().queues("maintenance_child").handle(EnqueueTest.CHARGE, (order, job) -> {}).build().start();
            out.println("elected false");
            out.flush();
            boolean elected = false;
            while (true) {
                if (queue.runsMaintenance() != elected) {
                    elected = !elected;
                    out.println("elected " + elected);
                    out.flush();
                }
                Thread.sleep(20);
            }
        }
    }
}
