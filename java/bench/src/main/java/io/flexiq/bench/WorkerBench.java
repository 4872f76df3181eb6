package io.flexiq.bench;

import io.flexiq.EnqueueOptions;
import io.flexiq.EnqueueRequest;
import io.flexiq.FlexiQ;
import io.flexiq.JobHandler;
import io.flexiq.Task;
import io.flexiq.Worker;
import io.flexiq.test.PostgresServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Workers, measured on one private PostgreSQL with durable commits: enqueue-to-start latency
 * with an idle worker (woken by PostgreSQL's notification), beside the same chain in minimal SQL
 * ({@link MinimalLatency}), and claimed-and-completed jobs per
 * second with no-op handlers in one, two and four worker processes ({@code
 * -Dflexiq.bench.processes=1,2}), then one worker process started on
 * a backlog inserted and analyzed before it (the jobs per throughput run, and any backlogs listed
 * in {@code -Dflexiq.bench.backlogs=1000000}). Each beside the claim-and-complete limit on the
 * same jobs: a bare claim of a batch ({@code UPDATE ... WHERE id IN (SELECT id ... FOR UPDATE
 * SKIP LOCKED LIMIT 100) RETURNING}) and the completion of that batch in one statement, driven by
 * {@link Pgbench} on {@value #LIMIT_CONNECTIONS} connections.
 *
 * <p>Arguments (optional): jobs per throughput run (default 50000), latency samples (default 300).
 */
public final class WorkerBench {
    /** The benchmark's payload. */
    public record Tick(long n) {}

    static final Task<Tick> TICK = Task.of("tick", Tick.class);
    private static final String SCHEMA = "flexiq_worker_bench";
    /** The queue the benchmark's jobs go to: FlexiQ's default. */
    private static final String QUEUE = "default";
    /**
     * The worker processes' settings a run may name ({@code -Dflexiq.bench.concurrency=8} and
     * so on): the worker's concurrency, prefetch and claim batch, and the client's pool size.
     * Those not named stay at FlexiQ's defaults, as a service gets them.
     */
    private static final List<String> WORKER_SETTINGS = List.of("concurrency", "prefetch", "claimBatch", "poolSize");
    /** Connections the claim-and-complete limit runs on. */
    static final int LIMIT_CONNECTIONS = 4;
    /** Jobs the limit claims per statement. */
    static final int CLAIM_BATCH_LIMIT = 100;
    private static final String LABEL = "%-46s %12s %12s %7s%n";
    /** Rounds of the concurrency-key comparison. */
    private static final int KEYED_ROUNDS = 5;
    /** Chains timed before the latency samples, and not counted: the first pays for class loading and JIT. */
    private static final int WARM_UP_CHAINS = 20;
    private static final String ROW = "%-46s %12.0f %12.0f %7.2f   load %s%n";

    private WorkerBench() {}

    /** Runs the benchmark, or (first argument {@code child}) one worker process of it. */
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("child")) {
            child(args[1], Handler.valueOf(args[2]), args[3]);
            return;
        }
        int jobs = args.length > 0 ? Integer.parseInt(args[0]) : 50_000;
        int samples = args.length > 1 ? Integer.parseInt(args[1]) : 300;
        try (PostgresServer pg = PostgresServer.start();
                FlexiQ queue = FlexiQ.builder(pg.url()).schema(SCHEMA).migrate(true).build()) {
            System.out.printf(Locale.ROOT, "FlexiQ worker benchmark: %d cores, PostgreSQL with fsync and"
                    + " synchronous_commit on%n%n", Runtime.getRuntime().availableProcessors());
            latency(queue, pg, samples);
            System.out.printf(Locale.ROOT, "%n" + LABEL, "claimed and completed, no-op handler",
                    "FlexiQ jobs/s", "limit jobs/s", "ratio");
            for (int processes : processCounts()) {
                double api = workerProcesses(queue, pg, jobs, processes, 0, Handler.NO_OP);
                double raw = claimAndCompleteLimit(queue, pg, jobs, false);
                System.out.printf(Locale.ROOT, ROW, processes + (processes == 1 ? " worker process, fresh table"
                        : " worker processes, fresh table"), api, raw, api / raw, loadAverage());
            }
            // Every job under one of 1,000 concurrency keys, each limited to 2 running jobs: the
            // claim counts and locks keys, against the same worker without them. One drain swings
            // with the machine, so the two alternate over rounds and the medians are compared.
            double[] keyed = new double[KEYED_ROUNDS];
            double[] unkeyed = new double[KEYED_ROUNDS];
            for (int round = 0; round < KEYED_ROUNDS; round++) {
                unkeyed[round] = workerProcesses(queue, pg, jobs, 1, 0, Handler.NO_OP);
                keyed[round] = workerProcesses(queue, pg, jobs, 1, 1_000, Handler.NO_OP);
            }
            System.out.printf(Locale.ROOT, LABEL, "medians of " + KEYED_ROUNDS + " alternating rounds", "FlexiQ jobs/s",
                    "no keys", "ratio");
            System.out.printf(Locale.ROOT, ROW, "1 process, 1,000 concurrency keys of limit 2", median(keyed),
                    median(unkeyed), median(keyed) / median(unkeyed), loadAverage());
            // A handler that writes one row to the same database per job: committed alone and the
            // job completed the ordinary way, against the row and the completion in one
            // transaction (JobContext.completeIn), alternating as above.
            // A tenth of the jobs: each run commits once per job.
            createEffects(pg);
            int writeJobs = Math.max(1_000, jobs / 10);
            double[] inTransaction = new double[KEYED_ROUNDS];
            double[] ordinary = new double[KEYED_ROUNDS];
            for (int round = 0; round < KEYED_ROUNDS; round++) {
                ordinary[round] = workerProcesses(queue, pg, writeJobs, 1, 0, Handler.WRITE);
                inTransaction[round] = workerProcesses(queue, pg, writeJobs, 1, 0, Handler.WRITE_IN_TRANSACTION);
            }
            System.out.printf(Locale.ROOT, LABEL, String.format(Locale.ROOT, "handler writing a row, %,d jobs, medians",
                    writeJobs),
                    "FlexiQ jobs/s", "ordinary", "ratio");
            System.out.printf(Locale.ROOT, ROW, "1 process, completed in the handler's transaction",
                    median(inTransaction), median(ordinary), median(inTransaction) / median(ordinary), loadAverage());
            System.out.printf(Locale.ROOT, "%n" + LABEL, "claimed and completed, no-op handler",
                    "FlexiQ jobs/s", "limit jobs/s", "ratio");
            // What a service meets after an outage or a burst: the jobs wait, autovacuum analyzes
            // the table, and only then does a worker start.
            for (int backlog : backlogs(jobs)) {
                double api = backlogDrained(queue, pg, backlog, jobs / 2);
                double raw = claimAndCompleteLimit(queue, pg, backlog, true);
                System.out.printf(Locale.ROOT, ROW, String.format(Locale.ROOT,
                        "%,d inserted and analyzed, then 1 process", backlog), api, raw, api / raw, loadAverage());
            }
        }
    }

    /**
     * Enqueue-to-start latency with an idle worker whose polling is too slow to matter, beside the
     * same chain in minimal SQL.
     */
    static void latency(FlexiQ queue, PostgresServer pg, int samples) throws Exception {
        long[] flexiq = flexiqLatency(queue, samples);
        String load = loadAverage();
        long[] minimal = MinimalLatency.sample(pg.jdbcUrl(), samples);
        System.out.printf(Locale.ROOT, "enqueue-to-start latency, idle worker, %d samples after %d warm-up"
                + " chains, ms:%n"
                + "  FlexiQ (enqueue to handler start)       p50 %5.1f  p99 %5.1f   load %s%n"
                + "  minimal SQL (insert+notify to claimed)  p50 %5.1f  p99 %5.1f   load %s%n",
                samples, WARM_UP_CHAINS, flexiq[samples / 2] / 1000.0, flexiq[samples * 99 / 100] / 1000.0, load,
                minimal[samples / 2] / 1000.0, minimal[samples * 99 / 100] / 1000.0, loadAverage());
    }

    /** Enqueue-to-start times of a FlexiQ worker, in microseconds, sorted. */
    private static long[] flexiqLatency(FlexiQ queue, int samples) throws Exception {
        BlockingQueue<Long> started = new ArrayBlockingQueue<>(1);
        Worker worker = queue.worker()
                .handle(TICK, (tick, job) -> started.add(System.nanoTime()))
                .pollInterval(Duration.ofSeconds(30))
                .build()
                .start();
        try {
            Thread.sleep(500);
            return timeChains(samples, i -> queue.enqueue(TICK, new Tick(i)), started, "the worker");
        } finally {
            worker.close();
        }
    }

    /** Enqueues sample {@code i}. */
    interface SampleEnqueue {
        void enqueue(int i) throws Exception;
    }

    /**
     * Times {@code samples} chains 20 ms apart, after {@link #WARM_UP_CHAINS} untimed ones, each
     * from just before its enqueue to the instant {@code started} receives, in microseconds,
     * sorted; {@code who} names the receiving side.
     */
    static long[] timeChains(int samples, SampleEnqueue enqueue, BlockingQueue<Long> started, String who)
            throws Exception {
        long[] micros = new long[samples];
        for (int i = -WARM_UP_CHAINS; i < samples; i++) {
            Thread.sleep(20);
            long before = System.nanoTime();
            enqueue.enqueue(i);
            Long at = started.poll(10, TimeUnit.SECONDS);
            if (at == null) {
                throw new IllegalStateException(who + " did not start sample " + i + " within 10 s");
            }
            if (i >= 0) {
                micros[i] = (at - before) / 1_000;
            }
        }
        Arrays.sort(micros);
        return micros;
    }

    /** The median of {@code values}. */
    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** What the worker processes' handler does with each job. */
    enum Handler {
        /** Nothing. */
        NO_OP,
        /** Inserts a row into {@value #EFFECTS}, committed alone; the job completes as the handler returns. */
        WRITE,
        /** Inserts the row and completes the job in one transaction ({@code JobContext.completeIn}). */
        WRITE_IN_TRANSACTION
    }

    /** The table the writing handlers insert into: one row per run. */
    private static final String EFFECTS = SCHEMA + "_effects";

    private static void createEffects(PostgresServer pg) throws Exception {
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + EFFECTS + " (job_id bigint NOT NULL, attempt int NOT NULL)");
        }
    }

    /** Jobs per second for worker JVMs draining {@code jobs} due jobs with {@code handler}. */
    static double workerProcesses(FlexiQ queue, PostgresServer pg, int jobs, int processes, int keys,
            Handler handler) throws Exception {
        List<Process> children = new ArrayList<>();
        for (int i = 0; i < processes; i++) {
            children.add(startChild(pg, handler));
        }
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl())) {
            // Warm-up: the workers' JIT compilation is not what is measured. Each process drains
            // about half the measured jobs first: with a share of half the jobs alone, four
            // processes' compiler threads took half of the 2 cores during the measured drain.
            fill(queue, pg, processes * jobs / 2, Instant.now(), keys);
            waitUntilDrained(c);
            // The measured jobs wait in a paused queue; resuming it wakes every worker at once
            // (jobs due later would be found by each worker's next poll, up to a poll interval
            // apart). The clock runs from the first claim to the last completion.
            queue.pauseQueue(QUEUE);
            fill(queue, pg, jobs, Instant.now(), keys);
            queue.resumeQueue(QUEUE);
            waitUntilDrained(c);
            return jobs / drainSeconds(c);
        } finally {
            for (Process p : children) {
                p.getOutputStream().close();
                p.waitFor(60, TimeUnit.SECONDS);
            }
        }
    }

    /** The backlogs drained by a worker started after them: {@code jobs}, and any listed in {@code flexiq.bench.backlogs}. */
    /** How many worker processes drain a fresh table together: 1, 2 and 4, or {@code -Dflexiq.bench.processes}. */
    static int[] processCounts() {
        return Arrays.stream(System.getProperty("flexiq.bench.processes", "1,2,4").split(","))
                .map(String::trim).mapToInt(Integer::parseInt).toArray();
    }

    static int[] backlogs(int jobs) {
        String more = System.getProperty("flexiq.bench.backlogs", "");
        return Stream.concat(Stream.of(String.valueOf(jobs)),
                        Arrays.stream(more.split(",")).map(String::trim).filter(b -> !b.isEmpty()))
                .mapToInt(Integer::parseInt).toArray();
    }

    /**
     * Jobs per second for one worker process that starts on {@code jobs} due jobs enqueued and
     * analyzed before it, from its first claim to its last completion. The process has drained
     * {@code warmUp} jobs first and paused while the backlog was inserted, as the fresh-table
     * cases warm theirs: compared across backlogs, JIT compilation would weigh on the small one
     * alone (a 50,000-job drain lasts about two seconds).
     */
    static double backlogDrained(FlexiQ queue, PostgresServer pg, int jobs, int warmUp) throws Exception {
        Process child = startChild(pg, Handler.NO_OP);
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl())) {
            fill(queue, pg, warmUp, Instant.now(), 0);
            waitUntilDrained(c);
            tell(child, "pause");
            fill(queue, pg, jobs, Instant.now(), 0);
            try (Statement s = c.createStatement()) {
                s.execute("ANALYZE " + SCHEMA + ".jobs");
            }
            tell(child, "go");
            waitUntilDrained(c);
            return jobs / drainSeconds(c);
        } finally {
            child.getOutputStream().close();
            child.waitFor(60, TimeUnit.SECONDS);
        }
    }

    /** Sends {@code command} to a worker process and waits for its answer line. */
    private static void tell(Process child, String command) throws IOException {
        child.getOutputStream().write((command + "\n").getBytes(StandardCharsets.UTF_8));
        child.getOutputStream().flush();
        // Read a byte at a time: a buffering reader could take the next answer along with it.
        StringBuilder answer = new StringBuilder();
        for (int b; (b = child.getInputStream().read()) != '\n'; ) {
            if (b < 0) {
                throw new IllegalStateException("the worker process ended before it answered " + command);
            }
            answer.append((char) b);
        }
        if (!command.equals(answer.toString())) {
            throw new IllegalStateException("the worker process answered " + answer + " to " + command);
        }
    }

    /** Seconds from the first claim to the last completion of the jobs in the table. */
    private static double drainSeconds(Connection c) throws Exception {
        try (Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT extract(epoch FROM max(finished_at) - min(started_at)) FROM "
                        + SCHEMA + ".jobs")) {
            r.next();
            return r.getDouble(1);
        }
    }

    private static Process startChild(PostgresServer pg, Handler handler) throws Exception {
        List<String> command = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString()));
        for (String name : WORKER_SETTINGS) {
            Integer value = setting(name);
            if (value != null) {
                command.add("-Dflexiq.bench." + name + "=" + value);
            }
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), WorkerBench.class.getName(), "child",
                pg.url(), handler.name(), pg.jdbcUrl()));
        return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    /** The machine's load averages over 1, 5 and 15 minutes, as the kernel reports them. */
    static String loadAverage() {
        try {
            String[] parts = Files.readString(Paths.get("/proc/loadavg")).split(" ");
            return parts[0] + " " + parts[1] + " " + parts[2];
        } catch (IOException e) {
            return "unknown";
        }
    }

    /**
     * One worker process of the benchmark: runs ticks with {@code handler} until its input
     * closes. A line {@code pause} closes its worker, {@code go} starts a new one in the same
     * (warm) JVM; each is answered with the same line once done.
     */
    static void child(String url, Handler handler, String jdbcUrl) throws Exception {
        FlexiQ.Builder client = FlexiQ.builder(url).schema(SCHEMA);
        Optional.ofNullable(setting("poolSize")).ifPresent(client::poolSize);
        try (FlexiQ queue = client.build()) {
            JobHandler<Tick> run = handlerOf(handler, jdbcUrl);
            Worker worker = childWorker(queue, run);
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                if (line.equals("pause")) {
                    worker.close();
                } else if (line.equals("go")) {
                    worker = childWorker(queue, run);
                }
                System.out.println(line);
                System.out.flush();
            }
            worker.close();
        }
    }

    /** The handler {@code handler} names; the writing ones keep a connection per handler thread. */
    private static JobHandler<Tick> handlerOf(Handler handler, String jdbcUrl) {
        if (handler == Handler.NO_OP) {
            return (tick, job) -> {};
        }
        boolean inTransaction = handler == Handler.WRITE_IN_TRANSACTION;
        ThreadLocal<Connection> connections = new ThreadLocal<>();
        String insert = "INSERT INTO " + EFFECTS + " (job_id, attempt) VALUES (?, ?)";
        return (tick, job) -> {
            Connection c = connections.get();
            if (c == null) {
                c = DriverManager.getConnection(jdbcUrl);
                c.setAutoCommit(!inTransaction);
                connections.set(c);
            }
            try (PreparedStatement ps = c.prepareStatement(insert)) {
                ps.setLong(1, Long.parseLong(job.jobId()));
                ps.setInt(2, job.attempt());
                ps.executeUpdate();
            }
            if (inTransaction) {
                job.completeIn(c);
                c.commit();
            }
        };
    }

    private static Worker childWorker(FlexiQ queue, JobHandler<Tick> handler) {
        Worker.Builder worker = queue.worker().handle(TICK, handler);
        Optional.ofNullable(setting("concurrency")).ifPresent(worker::concurrency);
        Optional.ofNullable(setting("prefetch")).ifPresent(worker::prefetch);
        Optional.ofNullable(setting("claimBatch")).ifPresent(worker::claimBatch);
        return worker.build().start();
    }

    /** The worker setting {@code name} the run names, or null for FlexiQ's default. */
    private static Integer setting(String name) {
        return Integer.getInteger("flexiq.bench." + name);
    }

    /**
     * The claim-and-complete limit, in jobs per second: {@code jobs} due jobs drained by pgbench on
     * {@value #LIMIT_CONNECTIONS} connections, each claiming a batch of {@value #CLAIM_BATCH_LIMIT}
     * with a bare statement and completing it in one more, each statement its own transaction as a
     * worker's are; the table analyzed first if {@code analyzed}. Both statements keep what
     * FlexiQ's schema requires (a lease exactly while running).
     */
    static double claimAndCompleteLimit(FlexiQ queue, PostgresServer pg, int jobs, boolean analyzed)
            throws Exception {
        fill(queue, pg, jobs, Instant.now(), 0);
        if (analyzed) {
            try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
                s.execute("ANALYZE " + SCHEMA + ".jobs");
            }
        }
        String script = "WITH claimed AS (UPDATE " + SCHEMA + ".jobs SET state = 'running', attempt = attempt + 1,"
                + " started_at = now(), lease_expires_at = now() + interval '30 seconds'"
                + " WHERE id IN (SELECT id FROM " + SCHEMA + ".jobs"
                + " WHERE queue = 'default' AND state IN ('available', 'scheduled', 'retryable') AND run_at <= now()"
                + " ORDER BY priority DESC, run_at, id FOR UPDATE SKIP LOCKED LIMIT " + CLAIM_BATCH_LIMIT + ")"
                + " RETURNING id) SELECT coalesce(array_agg(id), '{}') AS ids FROM claimed \\gset\n"
                + "UPDATE " + SCHEMA + ".jobs SET state = 'completed', finished_at = now(), lease_expires_at = NULL"
                + " WHERE id = ANY (:ids::bigint[]);\n";
        // Every claim but the last few takes a whole batch; one more round per client drains the rest.
        int perClient = jobs / CLAIM_BATCH_LIMIT / LIMIT_CONNECTIONS + 1;
        double tps = new Pgbench(pg).forTransactions(script, LIMIT_CONNECTIONS, perClient);
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT count(*) FROM " + SCHEMA + ".jobs WHERE state = 'completed'")) {
            r.next();
            if (r.getLong(1) != jobs) {
                throw new IllegalStateException("the limit's drain completed " + r.getLong(1) + " of " + jobs);
            }
        }
        return jobs * tps / ((double) perClient * LIMIT_CONNECTIONS);
    }

    /**
     * Empties the table and enqueues {@code jobs} jobs due at {@code dueAt}, in batches; with
     * {@code keys} above 0, job {@code i} under concurrency key {@code i % keys}, limit 2.
     */
    static void fill(FlexiQ queue, PostgresServer pg, int jobs, Instant dueAt, int keys) {
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl())) {
            try (Statement s = c.createStatement()) {
                s.execute("TRUNCATE " + SCHEMA + ".jobs CASCADE");
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        List<Tick> ticks = new ArrayList<>(1000);
        for (int i = 0; i < 1000; i++) {
            ticks.add(new Tick(i));
        }
        EnqueueOptions due = EnqueueOptions.builder().runAt(dueAt).build();
        for (int n = 0; n < jobs; n += 1000) {
            List<Tick> batch = ticks.subList(0, Math.min(1000, jobs - n));
            if (keys == 0) {
                queue.enqueueMany(TICK, batch, due);
                continue;
            }
            List<EnqueueRequest<Tick>> keyed = new ArrayList<>(batch.size());
            for (Tick t : batch) {
                keyed.add(EnqueueRequest.of(TICK, t, due.toBuilder().concurrencyKey("k" + t.n() % keys, 2).build()));
            }
            queue.enqueueManyWithResults(keyed);
        }
    }

    /**
     * Waits until no job is left to run or running. The check reads two index entries rather than
     * counting the table: a count of a million-job backlog every 50 ms took over half of this
     * 2-core machine away from the worker being measured (the limit's drain is never polled).
     */
    private static void waitUntilDrained(Connection c) throws Exception {
        try (Statement s = c.createStatement()) {
            // The statistics of a freshly filled table can make a scan look cheaper than the index.
            s.execute("SET enable_seqscan = off; SET enable_bitmapscan = off");
        }
        String unfinished = "SELECT EXISTS (SELECT FROM " + SCHEMA + ".jobs WHERE state IN ('available', 'scheduled',"
                + " 'retryable')) OR EXISTS (SELECT FROM " + SCHEMA + ".jobs WHERE lease_expires_at IS NOT NULL)";
        try (PreparedStatement check = c.prepareStatement(unfinished)) {
            while (true) {
                try (ResultSet r = check.executeQuery()) {
                    r.next();
                    if (!r.getBoolean(1)) {
                        return;
                    }
                }
                Thread.sleep(50);
            }
        } finally {
            try (Statement s = c.createStatement()) {
                s.execute("RESET enable_seqscan; RESET enable_bitmapscan");
            }
        }
    }
}
