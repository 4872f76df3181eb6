package io.flexiq.bench;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The enqueue-to-start chain in the least SQL, for the latency FlexiQ is compared with: one
 * auto-commit statement inserts a row into a bare table and notifies; a connection that listens
 * claims it with {@code FOR UPDATE SKIP LOCKED} in one more, and the clock stops when that claim
 * returns. The insert commits durably and the claim does not, as FlexiQ's do; no Java worker, no
 * JNI.
 */
final class MinimalLatency {
    private static final String TABLE = "minimal_latency";
    private static final String CHANNEL = "minimal_latency";

    private MinimalLatency() {}

    /** Enqueue-to-claimed times in microseconds, sorted, one per sample. */
    static long[] sample(String jdbcUrl, int samples) throws Exception {
        try (Connection c = DriverManager.getConnection(jdbcUrl); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + TABLE);
            s.execute("CREATE TABLE " + TABLE + " (id bigserial PRIMARY KEY, state text NOT NULL, payload bytea NOT NULL)");
        }
        BlockingQueue<Long> claimed = new ArrayBlockingQueue<>(1);
        Listener listener = new Listener(jdbcUrl, claimed);
        Thread thread = new Thread(listener, "minimal-latency-listener");
        thread.start();
        try (Connection c = DriverManager.getConnection(jdbcUrl);
                PreparedStatement enqueue = c.prepareStatement("WITH i AS (INSERT INTO " + TABLE
                        + " (state, payload) VALUES ('available', ?) RETURNING id)"
                        + " SELECT pg_notify('" + CHANNEL + "', '') FROM i")) {
            if (!listener.ready.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the minimal listener did not start listening");
            }
            return WorkerBench.timeChains(samples, i -> {
                enqueue.setBytes(1, ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8));
                enqueue.executeQuery().close();
            }, claimed, "the minimal listener");
        } finally {
            listener.stop = true;
            thread.join();
        }
    }

    /** Waits for notifications and claims a row for each. */
    private static final class Listener implements Runnable {
        private final String jdbcUrl;
        private final BlockingQueue<Long> claimed;
        final CountDownLatch ready = new CountDownLatch(1);
        volatile boolean stop;

        Listener(String jdbcUrl, BlockingQueue<Long> claimed) {
            this.jdbcUrl = jdbcUrl;
            this.claimed = claimed;
        }

        @Override
        public void run() {
            try (Connection c = DriverManager.getConnection(jdbcUrl);
                    PreparedStatement claim = c.prepareStatement("UPDATE " + TABLE + " SET state = 'running'"
                            + " WHERE id = (SELECT id FROM " + TABLE + " WHERE state = 'available'"
                            + " ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING id, payload")) {
                try (Statement s = c.createStatement()) {
                    // Claims commit without waiting for their flush, as FlexiQ's do.
                    s.execute("SET synchronous_commit = off");
                    s.execute("LISTEN " + CHANNEL);
                }
                ready.countDown();
                PGConnection pg = c.unwrap(PGConnection.class);
                while (!stop) {
                    PGNotification[] heard = pg.getNotifications(100);
                    if (heard == null || heard.length == 0) {
                        continue;
                    }
                    try (ResultSet r = claim.executeQuery()) {
                        if (r.next()) {
                            claimed.add(System.nanoTime());
                        }
                    }
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
