package io.flexiq.bench;

import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.Maintenance;
import io.flexiq.Task;
import io.flexiq.Worker;
import io.flexiq.test.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A steady mixed load held for a long time, to see whether FlexiQ stays flat: producers enqueue
 * at half the rate measured first (a third of the jobs with a key of their own), a worker
 * completes them, and maintenance and autovacuum run at their defaults. Every sample period it
 * prints jobs enqueued and completed per second, the jobs table's and its indexes' sizes, live and
 * dead rows, autovacuum's runs, and enqueue-to-start latency (p50, p99) of the period's jobs.
 *
 * <p>{@code -Dflexiq.bench.minutes} (default 120), {@code -Dflexiq.bench.sampleMinutes}
 * (default 10), {@code -Dflexiq.bench.rate} (jobs/s; default half the measured maximum),
 * {@code -Dflexiq.bench.retentionMinutes} (completed jobs kept; default maintenance's 24 h).
 */
public final class EnduranceBench {
    /** The benchmark's payload: when the job was enqueued, on this JVM's clock. */
    public record Stamp(long enqueuedNanos) {}

    static final Task<Stamp> STAMP = Task.of("stamp", Stamp.class);
    private static final String SCHEMA = "flexiq_endurance_bench";
    private static final int MINUTES = Integer.getInteger("flexiq.bench.minutes", 120);
    private static final int SAMPLE_MINUTES = Integer.getInteger("flexiq.bench.sampleMinutes", 10);
    /** Producer threads, as many as measured the maximum, so that half of it leaves them slack. */
    private static final int PRODUCERS = 8;
    /** Seconds of the maximum's measurement. */
    private static final int MAX_SECONDS = 20;
    private static final String HEADER = "%7s %10s %10s %10s %10s %10s %10s %8s %8s %7s %7s %s   %s%n";
    private static final String ROW = "%7d %10.0f %10.0f %10s %10s %10d %10d %8d %8d %7.1f %7.1f %s   %s%n";

    private EnduranceBench() {}

    /** Runs the load and prints a row per sample period. */
    public static void main(String[] args) throws Exception {
        Duration retention = Duration.ofMinutes(Long.getLong("flexiq.bench.retentionMinutes",
                Maintenance.DEFAULT_COMPLETED_RETENTION.toMinutes()));
        Maintenance maintenance = Maintenance.builder().completedRetention(retention).build();
        // Logging only: each autovacuum run and checkpoint is in the server's log, whose path is printed.
        try (PostgresServer pg = PostgresServer.builder().setting("log_autovacuum_min_duration", "0")
                        .setting("log_checkpoints", "on").start();
                Connection c = DriverManager.getConnection(pg.jdbcUrl());
                FlexiQ producer = FlexiQ.builder(pg.url()).schema(SCHEMA).migrate(true).build()) {
            int rate = Integer.getInteger("flexiq.bench.rate", 0);
            if (rate <= 0) {
                double max = maximum(producer);
                rate = (int) (max / 2);
                System.out.printf(Locale.ROOT, "maximum: %.0f enqueues/s (%d threads, %d s, the mix below, no"
                        + " worker); the run enqueues half of it%n", max, PRODUCERS, MAX_SECONDS);
                execute(c, "TRUNCATE " + SCHEMA + ".jobs CASCADE");
            }
            System.out.printf(Locale.ROOT, "FlexiQ endurance run: %d cores, durable PostgreSQL, autovacuum at its"
                    + " defaults; %d jobs/s for %d min from %d producer threads, one call a job, a third with a"
                    + " key; a worker (concurrency 8, no-op handler); completed jobs kept %d min%n%n",
                    Runtime.getRuntime().availableProcessors(), rate, MINUTES, PRODUCERS, retention.toMinutes());
            System.out.println("server log: " + pg.logFile());
            System.out.printf(Locale.ROOT, HEADER, "minute", "enqueued/s", "done/s", "table", "indexes", "live rows",
                    "dead rows", "autovac", "analyze", "p50 ms", "p99 ms", ServerActivity.HEADER, "load");
            try (FlexiQ workers = FlexiQ.builder(pg.url()).schema(SCHEMA).maintenance(maintenance).build()) {
                run(producer, workers, c, rate);
            }
            printIndexSizes(c);
        }
    }

    /** Enqueues per second of the mixed load from {@value #PRODUCERS} threads, with no worker. */
    private static double maximum(FlexiQ producer) throws Exception {
        AtomicLong n = new AtomicLong();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(MAX_SECONDS);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < PRODUCERS; t++) {
            Thread thread = new Thread(() -> {
                while (System.nanoTime() < end) {
                    enqueue(producer, n.incrementAndGet());
                }
            });
            thread.start();
            threads.add(thread);
        }
        for (Thread t : threads) {
            t.join();
        }
        return n.get() / (double) MAX_SECONDS;
    }

    /** Job {@code n}: every third with a key no other job has. */
    private static void enqueue(FlexiQ producer, long n) {
        Stamp stamp = new Stamp(System.nanoTime());
        if (n % 3 == 0) {
            producer.enqueue(STAMP, stamp, EnqueueOptions.builder().uniqueKey("endurance-" + n).build());
        } else {
            producer.enqueue(STAMP, stamp);
        }
    }

    private static void run(FlexiQ producer, FlexiQ workers, Connection c, int rate) throws Exception {
        AtomicLong enqueued = new AtomicLong();
        AtomicLong done = new AtomicLong();
        ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
        ScheduledExecutorService producers = Executors.newScheduledThreadPool(PRODUCERS);
        // Every 10 ms each producer enqueues its share of a hundredth of a second's jobs; the
        // remainder is spread by a running total, so that the rate holds whatever it is.
        AtomicLong ticks = new AtomicLong();
        for (int p = 0; p < PRODUCERS; p++) {
            producers.scheduleAtFixedRate(() -> {
                long tick = ticks.incrementAndGet();
                long owed = tick * rate / (100L * PRODUCERS) - (tick - 1) * rate / (100L * PRODUCERS);
                for (long i = 0; i < owed; i++) {
                    enqueue(producer, enqueued.incrementAndGet());
                }
            }, 0, 10, TimeUnit.MILLISECONDS);
        }
        Worker worker = workers.worker().handle(STAMP, (stamp, job) -> {
            latencies.add(System.nanoTime() - stamp.enqueuedNanos());
            done.incrementAndGet();
        }).concurrency(8).build().start();
        try {
            long start = System.nanoTime();
            long lastEnqueued = 0;
            long lastDone = 0;
            ServerActivity lastActivity = ServerActivity.read(c);
            for (int sample = 1; sample * SAMPLE_MINUTES <= MINUTES; sample++) {
                long wait = start + TimeUnit.MINUTES.toNanos((long) sample * SAMPLE_MINUTES) - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
                long e = enqueued.get();
                long d = done.get();
                long[] period = drain(latencies);
                ServerActivity activity = ServerActivity.read(c);
                double seconds = SAMPLE_MINUTES * 60.0;
                try (Statement s = c.createStatement();
                        ResultSet r = s.executeQuery("SELECT pg_table_size(relid), pg_indexes_size(relid), n_live_tup,"
                                + " n_dead_tup, autovacuum_count, autoanalyze_count FROM pg_stat_user_tables"
                                + " WHERE relid = '" + SCHEMA + ".jobs'::regclass")) {
                    r.next();
                    System.out.printf(Locale.ROOT, ROW, sample * SAMPLE_MINUTES, (e - lastEnqueued) / seconds,
                            (d - lastDone) / seconds, megabytes(r.getLong(1)), megabytes(r.getLong(2)), r.getLong(3),
                            r.getLong(4), r.getLong(5), r.getLong(6), percentile(period, 0.50),
                            percentile(period, 0.99), activity.since(lastActivity).row(), WorkerBench.loadAverage());
                }
                lastActivity = activity;
                lastEnqueued = e;
                lastDone = d;
            }
        } finally {
            producers.shutdownNow();
            producers.awaitTermination(10, TimeUnit.SECONDS);
            worker.close();
        }
    }

    /** Each index of the jobs table at the end, largest first: which ones the run grew. */
    private static void printIndexSizes(Connection c) throws Exception {
        System.out.printf(Locale.ROOT, "%n%-50s %10s%n", "index", "size");
        try (Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT indexrelid::regclass::text, pg_relation_size(indexrelid)"
                        + " FROM pg_index WHERE indrelid = '" + SCHEMA + ".jobs'::regclass ORDER BY 2 DESC")) {
            while (r.next()) {
                System.out.printf(Locale.ROOT, "%-50s %10s%n", r.getString(1), megabytes(r.getLong(2)));
            }
        }
    }

    /** The latencies gathered since the last call, sorted. */
    private static long[] drain(ConcurrentLinkedQueue<Long> latencies) {
        List<Long> taken = new ArrayList<>();
        for (Long l = latencies.poll(); l != null; l = latencies.poll()) {
            taken.add(l);
        }
        long[] sorted = taken.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(sorted);
        return sorted;
    }

    /** The {@code q} quantile of sorted nanoseconds, in milliseconds; NaN when there are none. */
    private static double percentile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        return sorted[(int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] / 1e6;
    }

    private static String megabytes(long bytes) {
        return String.format(Locale.ROOT, "%.1f MB", bytes / 1048576.0);
    }

    private static void execute(Connection c, String sql) throws Exception {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
