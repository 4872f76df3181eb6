package io.flexiq;

import static io.flexiq.WorkerTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.flexiq.test.PostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * PostgreSQL crashing (an immediate shutdown) under a worker running 5,000 jobs with a 5 s lease,
 * for less and for more than the lease: every job completes and none is dead, though leases
 * pass during the outage; a handler runs twice only where the crash forgot its claim (claims
 * commit without waiting for the disk), which the worker's log says of exactly those jobs.
 *
 * <p>Each case runs once; {@code -Dflexiq.test.crashRounds=3} runs each three times, and
 * {@code -Dflexiq.test.crashHog=true} runs them beside a CPU hog (a busy loop per core in another
 * process). Each round prints its counts.
 */
class WorkerCrashTest {
    static final Task<EnqueueTest.Order> CHARGE = EnqueueTest.CHARGE;
    static final int JOBS = 5_000;
    static final Duration LEASE = Duration.ofSeconds(5);

    @ParameterizedTest(name = "a crash of {0} s, {1} attempt(s) per job")
    @CsvSource({"3, 1", "10, 1", "40, 1", "10, 3"})
    void aCrashLosesNoFinishedHandlersOutcome(int seconds, int maxAttempts) throws Exception {
        int rounds = Integer.getInteger("flexiq.test.crashRounds", 1);
        boolean hog = Boolean.getBoolean("flexiq.test.crashHog");
        List<Process> hogs = hog ? cpuHogs() : List.of();
        try (PostgresServer pg = PostgresServer.start()) {
            for (int round = 1; round <= rounds; round++) {
                Round r = runThroughACrash(pg, "crash_" + seconds + "s_" + maxAttempts + "_" + round, seconds,
                        maxAttempts);
                System.out.printf(Locale.ROOT, "crash of %d s, %d attempt(s), %s, round %d: %s%n", seconds,
                        maxAttempts, hog ? "beside a CPU hog" : "at rest", round, r);
                assertEquals(Map.of("completed", (long) JOBS), r.states, r.schema + ": every job completed");
                assertEquals(JOBS, r.ran, r.schema + ": every handler ran");
                assertTrue(r.forgotten.containsAll(r.twice), r.schema + ": handlers that ran twice " + r.twice
                        + " without a forgotten claim to explain it (forgotten: " + r.forgotten + "); the log about"
                        + " them: " + r.aboutTwice);
            }
        } finally {
            hogs.forEach(Process::destroyForcibly);
        }
    }

    /** What one round came to. */
    private record Round(String schema, Map<String, Long> states, int ran, Set<Long> twice, Set<Long> forgotten,
            int recordedLate, int rescued, long millis, List<String> aboutTwice) {
        @Override
        public String toString() {
            return states + ", " + ran + " handlers ran, " + twice.size() + " twice (" + forgotten.size()
                    + " claims forgotten by the crash), " + recordedLate + " outcomes recorded after a rescue, "
                    + rescued + " rescues, " + millis + " ms";
        }
    }

    private static Round runThroughACrash(PostgresServer pg, String schema, int seconds, int maxAttempts)
            throws Exception {
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        long start = System.nanoTime();
        try (CapturedLogs logs = new CapturedLogs();
                FlexiQ queue = FlexiQ.builder(pg.url()).schema(schema).migrate(true).build()) {
            List<EnqueueTest.Order> orders = new ArrayList<>();
            for (int i = 0; i < JOBS; i++) {
                orders.add(new EnqueueTest.Order(i, i));
            }
            queue.enqueueMany(CHARGE, orders, EnqueueOptions.builder().maxAttempts(maxAttempts).build());
            WorkerTest.running(queue.worker()
                    .handle(CHARGE, (order, job) -> {
                        runs.computeIfAbsent(Long.parseLong(job.jobId()), id -> new AtomicInteger()).incrementAndGet();
                        // A little work per job, so that jobs are running when the crash comes.
                        Thread.sleep(1);
                    })
                    .concurrency(8)
                    .lease(LEASE)
                    .pollInterval(Duration.ofMillis(100)), () -> {
                await("a fifth of the jobs to run", () -> runs.size() > JOBS / 5);
                pg.crash();
                // The outage itself: real time the worker must ride out with PostgreSQL gone.
                Thread.sleep(seconds * 1_000L);
                pg.restart();
                await("every job to finish", () -> WorkerOutageTest.finished(pg, schema) == JOBS);
            });
            Set<Long> twice = runs.entrySet().stream().filter(e -> e.getValue().get() > 1).map(Map.Entry::getKey)
                    .collect(Collectors.toCollection(TreeSet::new));
            return new Round(schema, WorkerOutageTest.states(pg, schema), runs.size(), twice,
                    jobsOf(logs.at(Level.WARN, "forgot this attempt's claim")),
                    logs.at(Level.WARN, "recorded all the same").size(),
                    logs.matching(e -> e.getFormattedMessage().contains("the lease of attempt")).size(),
                    Duration.ofNanos(System.nanoTime() - start).toMillis(),
                    logs.matching(e -> e.getLevel().isGreaterOrEqual(Level.WARN)
                            && (e.getMDCPropertyMap().get("flexiq.jobId") == null
                                || twice.contains(Long.valueOf(e.getMDCPropertyMap().get("flexiq.jobId")))))
                            .stream().map(e -> e.getLevel() + " " + e.getFormattedMessage()).toList());
        }
    }

    /** The jobs the lines name in their MDC. */
    private static Set<Long> jobsOf(List<ILoggingEvent> lines) {
        return lines.stream().map(e -> Long.valueOf(e.getMDCPropertyMap().get("flexiq.jobId")))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** Busy loops in other processes, one per core, to load the machine as a busy host would be. */
    private static List<Process> cpuHogs() throws Exception {
        List<Process> hogs = new ArrayList<>();
        for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
            hogs.add(new ProcessBuilder("sh", "-c", "while :; do :; done").start());
        }
        return hogs;
    }
}
