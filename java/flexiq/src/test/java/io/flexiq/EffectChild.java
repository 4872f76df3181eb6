package io.flexiq;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;

/**
 * A worker process for {@link ExactlyOnceEffectsTest}, killed at random moments by the test. Its
 * handler writes one row per run into a table with no unique constraint, works a while, and
 * completes the job: in mode {@code transaction} in the same transaction as the row
 * ({@link JobContext#completeIn}), in mode {@code plain} the ordinary way, the row committed on
 * its own. Prints "ready" once its worker runs; runs until killed or its standard input closes.
 */
public final class EffectChild {
    private EffectChild() {}

    /** Arguments: FlexiQ URL, JDBC URL, schema, table, mode, lease and handler work in milliseconds. */
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String jdbc = args[1];
        String schema = args[2];
        String insert = "INSERT INTO " + args[3] + " (job_id, attempt) VALUES (?, ?)";
        boolean inTransaction = args[4].equals("transaction");
        Duration lease = Duration.ofMillis(Long.parseLong(args[5]));
        long workMillis = Long.parseLong(args[6]);
        // Each handler thread keeps a connection, as it would borrow one from a pool.
        ThreadLocal<Connection> connections = new ThreadLocal<>();
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).poolSize(4).build()) {
            Worker worker = queue.worker()
                    .handle(EnqueueTest.CHARGE, (order, job) -> {
                        Connection c = connections.get();
                        if (c == null) {
                            c = DriverManager.getConnection(jdbc);
                            c.setAutoCommit(!inTransaction);
                            connections.set(c);
                        }
                        try {
                            try (PreparedStatement ps = c.prepareStatement(insert)) {
                                ps.setString(1, job.jobId());
                                ps.setInt(2, job.attempt());
                                ps.executeUpdate();
                            }
                            // The rest of the handler's work, where a kill lands as often as not.
                            Thread.sleep(workMillis);
                            if (inTransaction) {
                                job.completeIn(c);
                                c.commit();
                            }
                        } catch (SQLException | RuntimeException e) {
                            // PostgreSQL restarted, or the attempt lost its job: a new connection next time.
                            connections.remove();
                            try {
                                c.close();
                            } catch (SQLException ignored) {
                                // Closing a connection that is gone: nothing more to undo.
                            }
                            throw e;
                        }
                    })
                    .concurrency(4)
                    .lease(lease)
                    .pollInterval(Duration.ofMillis(100))
                    .build()
                    .start();
            System.out.println("ready");
            System.out.flush();
            while (System.in.read() >= 0) {
                // The parent closes our input to stop us, when it does not kill us.
            }
            worker.close();
        }
    }
}
