package io.flexiq.bench;

import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.Maintenance;
import io.flexiq.Worker;
import io.flexiq.bench.WorkerBench.Tick;
import io.flexiq.test.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Finished jobs and maintenance, measured in one run on one private PostgreSQL with durable
 * commits:
 * <ol>
 *   <li>enqueue and claim+complete throughput on an empty table;
 *   <li>the same with {@code -Dflexiq.bench.finishedRows} (default 5,000,000) completed jobs
 *       present, inserted by one {@code INSERT ... SELECT generate_series} and analyzed;
 *   <li>a steady run of {@code -Dflexiq.bench.steadyMinutes} (default 10) on an emptied table:
 *       {@value #PRODUCERS} producer threads enqueueing {@code -Dflexiq.bench.rate} jobs/s in all
 *       (default 500), one call a job, a worker completing them,
 *       and maintenance deleting completed jobs {@code -Dflexiq.bench.retentionSeconds} (default
 *       30) after they finish, with the table's size ({@code pg_total_relation_size}, indexes
 *       and TOAST included) sampled every 30 s.
 * </ol>
 * Enqueue: {@value #ENQUEUE_THREADS} threads each calling {@code enqueue} for one job at a time.
 * Claim+complete: one worker (concurrency 8, no-op handler) in this JVM draining due jobs, from
 * its first claim to its last completion.
 */
public final class RetentionBench {
    private static final String SCHEMA = "flexiq_retention_bench";
    private static final int ENQUEUE_THREADS = 8;
    private static final int ENQUEUES = 20_000;
    private static final int DRAINED = 50_000;
    private static final long FINISHED_ROWS = Long.getLong("flexiq.bench.finishedRows", 5_000_000L);
    private static final int STEADY_MINUTES = Integer.getInteger("flexiq.bench.steadyMinutes", 10);
    private static final int RATE = Integer.getInteger("flexiq.bench.rate", 500);
    private static final int PRODUCERS = 4;
    private static final int RETENTION_SECONDS = Integer.getInteger("flexiq.bench.retentionSeconds", 30);
    /** Never worked: these jobs measure enqueues only, and are deleted afterwards. */
    private static final EnqueueOptions ENQUEUE_ONLY = EnqueueOptions.builder().queue("enqueue_only").build();
    private static final String ROW = "%-44s %10.0f %14.0f   load %s%n";

    private RetentionBench() {}

    /** Runs the three parts and prints their figures. */
    public static void main(String[] args) throws Exception {
        try (PostgresServer pg = PostgresServer.start();
                Connection c = DriverManager.getConnection(pg.jdbcUrl())) {
            System.out.printf(Locale.ROOT, "FlexiQ retention benchmark: %d cores, PostgreSQL with fsync and"
                    + " synchronous_commit on%n%n%-44s %10s %14s%n", Runtime.getRuntime().availableProcessors(),
                    "", "enqueue/s", "claim+done/s");
            // Default maintenance (24 h retention): it runs, and finds nothing to delete.
            try (FlexiQ queue = FlexiQ.builder(pg.url()).schema(SCHEMA).migrate(true).build()) {
                throughput(queue, c, "empty table");
                long start = System.nanoTime();
                insertFinished(c, FINISHED_ROWS);
                System.out.printf(Locale.ROOT, "  (%,d completed rows inserted and analyzed in %.0f s; table %s)%n",
                        FINISHED_ROWS, (System.nanoTime() - start) / 1e9, size(c));
                throughput(queue, c, String.format(Locale.ROOT, "%,d finished rows present", FINISHED_ROWS));
            }
            // Closed: its maintenance lock is free for the steady run's client.
            steady(pg, c);
        }
    }

    /** Prints enqueue and claim+complete throughput on the table as it is. */
    private static void throughput(FlexiQ queue, Connection c, String label) throws Exception {
        double enqueue = enqueueRate(queue);
        double drain = drainRate(queue, c);
        System.out.printf(Locale.ROOT, ROW, label, enqueue, drain, WorkerBench.loadAverage());
    }

    /** Single enqueues per second from {@value #ENQUEUE_THREADS} threads, after a warm-up. */
    private static double enqueueRate(FlexiQ queue) throws Exception {
        runEnqueues(queue, "warmup", ENQUEUES / 4);
        long start = System.nanoTime();
        runEnqueues(queue, "measured", ENQUEUES);
        return ENQUEUES / ((System.nanoTime() - start) / 1e9);
    }

    private static void runEnqueues(FlexiQ queue, String task, int jobs) throws Exception {
        List<Thread> threads = new ArrayList<>();
        AtomicLong next = new AtomicLong();
        for (int t = 0; t < ENQUEUE_THREADS; t++) {
            Thread thread = new Thread(() -> {
                for (long n = next.getAndIncrement(); n < jobs; n = next.getAndIncrement()) {
                    queue.enqueue(WorkerBench.TICK, new Tick(n), ENQUEUE_ONLY);
                }
            });
            thread.start();
            threads.add(thread);
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    /**
     * Claimed and completed jobs per second: {@value #DRAINED} due jobs enqueued, then drained by
     * a worker; timed from the first claim to the last completion. The pending jobs of this and
     * the enqueue measurement are deleted afterwards, the completed ones stay.
     */
    private static double drainRate(FlexiQ queue, Connection c) throws Exception {
        long from = scalar(c, "SELECT coalesce(max(id), 0) FROM " + SCHEMA + ".jobs");
        List<Tick> batch = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            batch.add(new Tick(i));
        }
        for (int n = 0; n < DRAINED; n += batch.size()) {
            queue.enqueueMany(WorkerBench.TICK, batch, EnqueueOptions.defaults());
        }
        Worker worker = queue.worker().handle(WorkerBench.TICK, (tick, job) -> {}).concurrency(8).build().start();
        try {
            while (scalar(c, "SELECT count(*) FROM " + SCHEMA + ".jobs WHERE id > " + from
                    + " AND queue = 'default' AND state <> 'completed'") > 0) {
                Thread.sleep(100);
            }
        } finally {
            worker.close();
        }
        double seconds = scalar(c, "SELECT (extract(epoch FROM max(finished_at) - min(started_at)) * 1000)::bigint"
                + " FROM " + SCHEMA + ".jobs WHERE id > " + from + " AND queue = 'default'") / 1000.0;
        execute(c, "DELETE FROM " + SCHEMA + ".jobs WHERE queue = 'enqueue_only'");
        return DRAINED / seconds;
    }

    /**
     * Inserts {@code rows} completed jobs, finished within the last hour, in one statement, then
     * vacuums and analyzes (as autovacuum would soon), and checkpoints.
     */
    private static void insertFinished(Connection c, long rows) throws Exception {
        execute(c, "INSERT INTO " + SCHEMA + ".jobs (queue, task, payload, state, priority, run_at, attempt,"
                + " max_attempts, retry_initial_ms, retry_max_ms, retry_multiplier, retry_jitter, tags, key_held,"
                + " created_at, started_at, finished_at)"
                + " SELECT 'default', 'tick', convert_to('{\"n\":' || i || '}', 'UTF8'), 'completed', 0, now(), 1,"
                + " 20, 1000, 3600000, 2, 0.1, '[]', false, now() - interval '1 hour', now() - interval '1 hour',"
                + " now() - (i % 3600) * interval '1 second'"
                + " FROM generate_series(1, " + rows + ") i");
        execute(c, "VACUUM ANALYZE " + SCHEMA + ".jobs");
        // The insert's writes go to disk now, not during the next measurement.
        execute(c, "CHECKPOINT");
    }

    /**
     * The steady run: an emptied table, producers at {@link #RATE} jobs/s, a worker, and
     * maintenance with a short retention; prints the table's size every 30 s.
     */
    private static void steady(PostgresServer pg, Connection c) throws Exception {
        execute(c, "TRUNCATE " + SCHEMA + ".jobs CASCADE");
        Duration retention = Duration.ofSeconds(RETENTION_SECONDS);
        Maintenance maintenance = Maintenance.builder().completedRetention(retention)
                .cancelledRetention(retention).deadRetention(retention).build();
        System.out.printf(Locale.ROOT, "%nsteady run: %d jobs/s enqueued and completed for %d min, completed jobs"
                + " deleted %d s after they finish (maintenance every %d s, batches of %d)%n"
                + "%8s %12s %12s %12s %12s   load%n", RATE, STEADY_MINUTES, RETENTION_SECONDS,
                maintenance.interval().toSeconds(), maintenance.batchSize(), "minute", "table size", "rows",
                "enqueued", "deleted");
        try (FlexiQ producer = FlexiQ.builder(pg.url()).schema(SCHEMA).build();
                FlexiQ workers = FlexiQ.builder(pg.url()).schema(SCHEMA).maintenance(maintenance).build()) {
            ScheduledExecutorService producers = Executors.newScheduledThreadPool(PRODUCERS);
            AtomicLong n = new AtomicLong();
            // Every 50 ms, each producer enqueues its share of a twentieth of a second's jobs, one call each.
            int perTick = Math.max(1, RATE / 20 / PRODUCERS);
            for (int p = 0; p < PRODUCERS; p++) {
                producers.scheduleAtFixedRate(() -> {
                    for (int i = 0; i < perTick; i++) {
                        producer.enqueue(WorkerBench.TICK, new Tick(n.incrementAndGet()));
                    }
                }, 0, 50, TimeUnit.MILLISECONDS);
            }
            Worker worker = workers.worker().handle(WorkerBench.TICK, (tick, job) -> {}).concurrency(8).build().start();
            long start = System.nanoTime();
            long deletedBefore = deleted(c);
            try {
                for (int sample = 0; sample <= STEADY_MINUTES * 2; sample++) {
                    long due = start + TimeUnit.SECONDS.toNanos(30L * sample);
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    long enqueued = n.get();
                    long rows = scalar(c, "SELECT count(*) FROM " + SCHEMA + ".jobs");
                    System.out.printf(Locale.ROOT, "%8.1f %12s %12d %12d %12d   %s%n", sample / 2.0, size(c), rows,
                            enqueued, deleted(c) - deletedBefore, WorkerBench.loadAverage());
                }
            } finally {
                producers.shutdownNow();
                producers.awaitTermination(10, TimeUnit.SECONDS);
                worker.close();
            }
        }
    }

    /** Rows deleted from the table since the server started, as its statistics count them (a second or so behind). */
    private static long deleted(Connection c) throws Exception {
        return scalar(c, "SELECT n_tup_del FROM pg_stat_user_tables WHERE relid = '" + SCHEMA + ".jobs'::regclass");
    }

    private static String size(Connection c) throws Exception {
        return String.format(Locale.ROOT, "%.1f MB",
                scalar(c, "SELECT pg_total_relation_size('" + SCHEMA + ".jobs')") / 1048576.0);
    }

    private static long scalar(Connection c, String sql) throws Exception {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getLong(1);
        }
    }

    private static void execute(Connection c, String sql) throws Exception {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
