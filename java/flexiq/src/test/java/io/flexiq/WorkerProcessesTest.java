package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Workers in separate JVMs sharing one queue, a worker JVM killed mid-handler, and the workers'
 * registrations.
 */
class WorkerProcessesTest {
    private static Process child(String url, String schema, String mode, long leaseMillis) throws Exception {
        return new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), WorkerChild.class.getName(), url, schema, mode,
                Long.toString(leaseMillis))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
    }

    private static CompletableFuture<List<String>> lines(Process p) {
        return CompletableFuture.supplyAsync(() -> {
            List<String> lines = new ArrayList<>();
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = r.readLine(); line != null; line = r.readLine()) {
                    lines.add(line);
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return lines;
        });
    }

    @Test
    void workerProcessesRunEveryJobOnceAndNeverTheSameJobAtOnce() throws Exception {
        String url = TestDatabase.url();
        String schema = TestDatabase.freshSchema();
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).migrate(true).build()) {
            List<Process> workers = new ArrayList<>();
            List<CompletableFuture<List<String>>> outputs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Process p = child(url, schema, "run", 30_000);
                workers.add(p);
                outputs.add(lines(p));
            }
            int jobs = 3_000;
            List<EnqueueTest.Order> orders = new ArrayList<>();
            for (int i = 0; i < jobs; i++) {
                orders.add(new EnqueueTest.Order(i, i));
            }
            List<String> ids = new ArrayList<>();
            for (int from = 0; from < jobs; from += 500) {
                ids.addAll(queue.enqueueMany(EnqueueTest.CHARGE, orders.subList(from, from + 500), EnqueueOptions.defaults()));
            }
            WorkerTest.await("every job to complete", () -> ids.stream().allMatch(
                    id -> queue.getJob(id).orElseThrow().state() == JobState.COMPLETED));
            for (Process p : workers) {
                p.getOutputStream().close();
            }
            Map<String, List<long[]>> runs = new HashMap<>();
            Set<String> pids = new HashSet<>();
            for (int i = 0; i < workers.size(); i++) {
                assertTrue(workers.get(i).waitFor(60, TimeUnit.SECONDS), "worker exits");
                assertEquals(0, workers.get(i).exitValue());
                for (String line : outputs.get(i).get(60, TimeUnit.SECONDS)) {
                    String[] f = line.split(" ");
                    runs.computeIfAbsent(f[0], k -> new ArrayList<>())
                            .add(new long[] {Long.parseLong(f[3]), Long.parseLong(f[4])});
                    pids.add(f[2]);
                }
            }
            assertEquals(new HashSet<>(ids), runs.keySet(), "every job ran");
            for (Map.Entry<String, List<long[]>> e : runs.entrySet()) {
                List<long[]> r = e.getValue();
                for (int a = 0; a < r.size(); a++) {
                    for (int b = a + 1; b < r.size(); b++) {
                        boolean overlap = r.get(a)[0] < r.get(b)[1] && r.get(b)[0] < r.get(a)[1];
                        assertTrue(!overlap, "job " + e.getKey() + " ran twice at once");
                    }
                }
                assertEquals(1, r.size(), "job " + e.getKey() + " ran once");
            }
            assertEquals(3, pids.size(), "all three processes took work");
        }
    }

    @Test
    void aJobWhoseWorkerWasKilledIsFinishedByAnotherOnItsSecondAttemptKeepingItsKey() throws Exception {
        String url = TestDatabase.url();
        String schema = TestDatabase.freshSchema();
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).migrate(true).build()) {
            String id = queue.enqueue(EnqueueTest.CHARGE, new EnqueueTest.Order(1, 1),
                    EnqueueOptions.builder().uniqueKey("charge-order-1").build());
            Process doomed = child(url, schema, "hang", 1_500);
            BufferedReader out = new BufferedReader(new InputStreamReader(doomed.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("started " + id, out.readLine());
            doomed.destroyForcibly();
            assertTrue(doomed.waitFor(30, TimeUnit.SECONDS));
            assertEquals(137, doomed.exitValue(), "killed by SIGKILL");
            assertEquals(JobState.RUNNING, queue.getJob(id).orElseThrow().state());
            assertEquals(id, queue.enqueue(EnqueueTest.CHARGE, new EnqueueTest.Order(1, 1),
                    EnqueueOptions.builder().uniqueKey("charge-order-1").build()), "a replay finds the orphaned job");

            List<Integer> attempts = new CopyOnWriteArrayList<>();
            Worker rescuer = queue.worker()
                    .handle(EnqueueTest.CHARGE, (order, job) -> attempts.add(job.attempt()))
                    .pollInterval(Duration.ofMillis(50))
                    .build()
                    .start();
            try {
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                JobInfo info = queue.getJob(id).orElseThrow();
                while (info.state() != JobState.COMPLETED) {
                    assertTrue(info.keyHeld(), "the key stays held while the job is " + info.state());
                    assertTrue(System.nanoTime() < end, "the job was finished in time");
                    Thread.sleep(20);
                    info = queue.getJob(id).orElseThrow();
                }
            } finally {
                rescuer.close();
            }
            JobInfo done = queue.getJob(id).orElseThrow();
            assertEquals(2, done.attempt());
            assertEquals(List.of(2), attempts);
            assertEquals(1, TestDatabase.scalar("SELECT count(*) FROM " + schema + ".jobs"), "one job in all");
        }
    }

    @Test
    void aRunningWorkerIsListedWithWhatItRunsUntilItStops() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            assertTrue(queue.workers().isEmpty());
            Worker worker = queue.worker().queues("default", "mail").concurrency(3).lease(Duration.ofSeconds(9))
                    .handle(EnqueueTest.CHARGE, (order, job) -> { }).build().start();
            try {
                WorkerTest.await("the worker to register", () -> !queue.workers().isEmpty());
                RegisteredWorker me = queue.workers().get(0);
                assertEquals(ProcessHandle.current().pid(), me.pid());
                assertEquals(List.of("default", "mail"), me.queues());
                assertEquals(List.of(EnqueueTest.CHARGE.name()), me.tasks());
                assertEquals(3, me.concurrency());
                assertEquals(Duration.ofSeconds(9), me.lease());
                assertTrue(me.name().startsWith("flexiq-worker-"), me.name());
                assertFalse(me.host().isBlank());
                assertFalse(me.version().isBlank());
                assertTrue(Duration.between(me.startedAt(), me.lastHeartbeat()).abs().toSeconds() < 60, me.toString());
            } finally {
                worker.close();
            }
            assertTrue(queue.workers().isEmpty(), "a stopped worker removes its registration");
        }
    }

    @Test
    void aKilledWorkerProcessLeavesTheListWithinItsLeaseAndAMaintenanceIntervalAndItsJobIsRescued()
            throws Exception {
        String url = TestDatabase.url();
        String schema = TestDatabase.freshSchema();
        long leaseMillis = 1_500;
        long intervalMillis = 250;
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).migrate(true)
                .maintenance(Maintenance.builder().interval(Duration.ofMillis(intervalMillis)).build()).build()) {
            String id = queue.enqueue(EnqueueTest.CHARGE, new EnqueueTest.Order(1, 1));
            Process doomed = child(url, schema, "hang", leaseMillis);
            long gone;
            BufferedReader out = new BufferedReader(new InputStreamReader(doomed.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("started " + id, out.readLine());
            WorkerTest.await("the worker process to register", () -> queue.workers().stream()
                    .anyMatch(w -> w.pid() == doomed.pid()));
            // A worker here too: from it on, this client takes part in maintenance.
            Worker rescuer = queue.worker().handle(EnqueueTest.CHARGE, (order, job) -> { })
                    .pollInterval(Duration.ofMillis(50)).build().start();
            try {
                doomed.destroyForcibly();
                assertTrue(doomed.waitFor(30, TimeUnit.SECONDS));
                long killed = System.nanoTime();
                WorkerTest.await("the killed worker to leave the list", () -> queue.workers().stream()
                        .noneMatch(w -> w.pid() == doomed.pid()));
                gone = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
                WorkerTest.await("the orphaned job to complete",
                        () -> queue.getJob(id).orElseThrow().state() == JobState.COMPLETED);
            } finally {
                rescuer.close();
            }
            // Documented: within its lease and one maintenance interval of its last heartbeat
            // (the maintainer it was, the election passes to this client first); the rest is
            // room for a busy machine.
            assertTrue(gone < leaseMillis + intervalMillis + 5_000, "left the list " + gone + " ms after the kill");
            assertEquals(2, queue.getJob(id).orElseThrow().attempt(), "rescued, then run again");
            System.out.printf("a worker process killed with a %d ms lease and %d ms maintenance left the list of"
                    + " workers %d ms after the kill; its job completed on its second attempt%n", leaseMillis,
                    intervalMillis, gone);
        }
    }
}
