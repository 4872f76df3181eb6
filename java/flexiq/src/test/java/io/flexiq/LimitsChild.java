package io.flexiq;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;

/**
 * One of the worker processes of {@link ConcurrencyAndRateLimitsTest}: runs the test's jobs, each
 * handler recording in PostgreSQL when it began and ended, until its input closes.
 */
public final class LimitsChild {
    static final Task<ConcurrencyAndRateLimitsTest.Call> CALL =
            Task.of("limited_call", ConcurrencyAndRateLimitsTest.Call.class);

    private LimitsChild() {}

    /** Arguments: URL, JDBC URL, schema. */
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String jdbc = args[1];
        String schema = args[2];
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).build()) {
            Worker worker = queue.worker().queues("default", "payments").concurrency(4)
                    .pollInterval(Duration.ofMillis(50))
                    .handle(CALL, (call, job) -> {
                        record(jdbc, "INSERT INTO " + schema + ".runs VALUES (?, ?, clock_timestamp(), NULL)",
                                job.jobId(), call.key());
                        // The run's length, as the test asks: the overlaps it reads from runs need it.
                        Thread.sleep(call.sleepMillis());
                        record(jdbc, "UPDATE " + schema + ".runs SET ended = clock_timestamp() WHERE job_id = ?"
                                + " AND key IS NOT DISTINCT FROM ?", job.jobId(), call.key());
                    })
                    .build().start();
            try {
                ChildProcesses.readyUntilInputCloses();
            } finally {
                worker.close();
            }
        }
    }

    private static void record(String jdbc, String sql, String jobId, String key) throws Exception {
        try (Connection c = DriverManager.getConnection(jdbc); PreparedStatement s = c.prepareStatement(sql)) {
            s.setLong(1, Long.parseLong(jobId));
            s.setString(2, key);
            s.executeUpdate();
        }
    }
}
