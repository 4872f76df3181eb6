package io.flexiq;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;

/**
 * One of the worker processes of {@link QueuePauseTest}: runs the test's jobs, each handler
 * recording in PostgreSQL, by the server's clock, when it began, until its input closes.
 */
public final class PauseChild {
    static final Task<QueuePauseTest.Step> STEP = Task.of("paused_step", QueuePauseTest.Step.class);

    private PauseChild() {}

    /** Arguments: URL, JDBC URL, schema. */
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String jdbc = args[1];
        String schema = args[2];
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).build();
                Connection c = DriverManager.getConnection(jdbc);
                PreparedStatement record = c.prepareStatement("INSERT INTO " + schema
                        + ".runs VALUES (?, ?, clock_timestamp())")) {
            Worker worker = queue.worker().queues("default", "reports").concurrency(4)
                    .pollInterval(Duration.ofMillis(200))
                    .handle(STEP, (step, job) -> {
                        synchronized (record) {
                            record.setLong(1, Long.parseLong(job.jobId()));
                            record.setString(2, job.queue());
                            record.executeUpdate();
                        }
                        Thread.sleep(step.sleepMillis());
                    })
                    .build().start();
            try {
                ChildProcesses.readyUntilInputCloses();
            } finally {
                worker.close();
            }
        }
    }
}
