package io.flexiq;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;

/**
 * A worker process for {@link WorkerProcessesTest}. Mode {@code run}: runs charges, printing
 * "jobId attempt pid startMicros endMicros" per run, until its standard input closes. Mode
 * {@code hang}: prints "started jobId" when a handler starts, and never finishes it.
 */
public final class WorkerChild {
    private WorkerChild() {}

    /** Arguments: database URL, schema, mode, lease in milliseconds. */
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String schema = args[1];
        boolean hang = args[2].equals("hang");
        Duration lease = Duration.ofMillis(Long.parseLong(args[3]));
        PrintStream out = System.out;
        long pid = ProcessHandle.current().pid();
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).poolSize(4).build()) {
            Worker worker = queue.worker()
                    .handle(EnqueueTest.CHARGE, (order, job) -> {
                        Instant start = Instant.now();
                        if (hang) {
                            synchronized (out) {
                                out.println("started " + job.jobId());
                                out.flush();
                            }
                            // Hangs until the test kills this process, the event under test.
                            Thread.sleep(Long.MAX_VALUE);
                        }
                        // Handlers of uneven length (0 to 2 ms), so that workers interleave.
                        Thread.sleep(order.amountCents() % 3);
                        String line = job.jobId() + " " + job.attempt() + " " + pid + " " + micros(start) + " "
                                + micros(Instant.now());
                        synchronized (out) {
                            out.println(line);
                        }
                    })
                    .concurrency(8)
                    .lease(lease)
                    .pollInterval(Duration.ofMillis(100))
                    .build()
                    .start();
            waitForEndOfInput();
            worker.close();
            out.flush();
        }
    }

    private static void waitForEndOfInput() throws IOException {
        while (System.in.read() >= 0) {
            // The parent closes our input to stop us.
        }
    }

    private static long micros(Instant t) {
        return t.getEpochSecond() * 1_000_000L + t.getNano() / 1_000;
    }
}
