package io.flexiq;

import static io.flexiq.WorkerTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Maintenance: one client per schema elected among processes, taking over when the holder dies;
 * finished jobs pruned by retention, never while their key is held; keys released and leases
 * rescued without any call asking for it.
 */
class MaintenanceTest {
    private static final EnqueueTest.Order ORDER = new EnqueueTest.Order(7, 700);

    /** How many sessions hold the maintenance lock of {@code schema}. */
    private static long holders(String schema) throws Exception {
        return TestDatabase.scalar("SELECT count(*) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted"
                + " AND l.objsubid = 1 AND (l.classid::bigint << 32 | l.objid::bigint)"
                + " = hashtextextended('flexiq.maintenance." + schema + "', 0)");
    }

    /**
     * Waits until {@code n} sessions that do not hold {@code schema}'s maintenance lock have
     * each asked for it once more since this call, every one refused: the last statement of
     * such a session is the election's, naming the schema's lock.
     */
    private static void awaitRefusedTries(String schema, int n) throws Exception {
        long since = TestDatabase.scalar("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint");
        await(n + " sessions refused the lock since " + since, () -> WorkerTest.scalar(
                "SELECT count(*) FROM pg_stat_activity a WHERE a.state = 'idle'"
                        + " AND a.query LIKE '%flexiq.maintenance." + schema + "''%'"
                        + " AND a.state_change > to_timestamp(" + since + " / 1000000.0)"
                        + " AND NOT EXISTS (SELECT FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory'"
                        + " AND l.granted)") >= n);
    }

    /** The live threads of this JVM that run the maintenance of {@code schema}. */
    private static List<String> maintenanceThreads(String schema) {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(name -> name.equals("flexiq-maintenance-" + schema)).toList();
    }

    /** A child JVM, with the last "elected" line it printed kept up to date. */
    private static final class Child {
        final Process process;
        final AtomicBoolean elected = new AtomicBoolean();
        final List<String> lines = new CopyOnWriteArrayList<>();

        Child(String url, String schema) throws Exception {
            process = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                    System.getProperty("java.class.path"), MaintenanceChild.class.getName(), url, schema)
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line = r.readLine(); line != null; line = r.readLine()) {
                        lines.add(line);
                        elected.set(line.equals("elected true"));
                    }
                } catch (java.io.IOException e) {
                    // The process died: its last line stands.
                }
            });
            reader.setDaemon(true);
            reader.start();
        }
    }

    private static List<Child> electedOnes(List<Child> children) {
        List<Child> elected = new ArrayList<>();
        for (Child c : children) {
            if (c.elected.get() && c.process.isAlive()) {
                elected.add(c);
            }
        }
        return elected;
    }

    @Test
    void oneProcessRunsMaintenanceAndAnotherTakesOverWhenItIsKilled() throws Exception {
        String url = TestDatabase.url();
        String schema = TestDatabase.freshSchema();
        FlexiQ.builder(url).schema(schema).migrate(true).build().close();
        List<Child> children = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                children.add(new Child(url, schema));
            }
            await("every child to start", () -> children.stream().allMatch(c -> !c.lines.isEmpty()));
            await("one child to run maintenance", () -> electedOnes(children).size() == 1);
            // Several intervals on, still exactly one, and its session is the one holding the lock:
            // each of the other two has asked for it twice more since, and been refused.
            awaitRefusedTries(schema, 2);
            awaitRefusedTries(schema, 2);
            List<Child> elected = electedOnes(children);
            assertEquals(1, elected.size(), "exactly one elected");
            assertEquals(1, holders(schema));

            Child holder = elected.get(0);
            holder.process.destroyForcibly().waitFor();
            await("another child to take over", () -> electedOnes(children).size() == 1);
            assertEquals(1, holders(schema));
        } finally {
            for (Child c : children) {
                c.process.destroyForcibly().waitFor();
            }
        }
    }

    @Test
    void aClientThatOptsOutNeverTakesTheLock() throws Exception {
        String schema = TestDatabase.freshSchema();
        Maintenance off = Maintenance.builder().enabled(false).interval(Duration.ofMillis(50)).build();
        try (FlexiQ queue = FlexiQ.builder(TestDatabase.url()).schema(schema).migrate(true).maintenance(off).build()) {
            CountDownLatch ran = new CountDownLatch(1);
            WorkerTest.running(queue.worker().handle(EnqueueTest.CHARGE, (order, job) -> ran.countDown()), () -> {
                // The worker is up and has run a job. A client that takes part starts its
                // maintenance thread as its first worker starts, and tries for the lock at once.
                queue.enqueue(EnqueueTest.CHARGE, ORDER);
                assertTrue(ran.await(30, TimeUnit.SECONDS), "the worker ran a job");
                assertEquals(List.of(), maintenanceThreads(schema), "a maintenance thread");
                assertEquals(0, holders(schema));
                assertFalse(queue.runsMaintenance());
                // A client of the schema that takes part is elected: the lock was free, and the
                // thread looked for above is there for it.
                Maintenance on = Maintenance.builder().interval(Duration.ofMillis(50)).build();
                try (FlexiQ other = FlexiQ.builder(TestDatabase.url()).schema(schema).maintenance(on).build()) {
                    WorkerTest.running(other.worker().queues("other").handle(EnqueueTest.CHARGE, (order, job) -> {}),
                            () -> {
                        await("the other client to be elected", other::runsMaintenance);
                        assertEquals(List.of("flexiq-maintenance-" + schema), maintenanceThreads(schema));
                        assertEquals(1, holders(schema));
                        assertFalse(queue.runsMaintenance());
                    });
                }
            });
        }
    }

    @Test
    void aClientWhoseRoleMayNotDeleteJobsSaysSoAndLeavesTheLockFree() throws Exception {
        String schema = TestDatabase.freshSchema();
        String role = schema + "_worker";
        try (CapturedLogs logs = new CapturedLogs();
                FlexiQ owner = FlexiQ.builder(TestDatabase.url()).schema(schema).migrate(true).build()) {
            TestDatabase.execute("CREATE ROLE " + role + " LOGIN");
            owner.grantWorker(role);
            Maintenance quick = Maintenance.builder().interval(Duration.ofMillis(50)).build();
            try (FlexiQ worker = FlexiQ.builder(TestDatabase.url(role)).schema(schema).maintenance(quick).build()) {
                WorkerTest.running(worker.worker().handle(EnqueueTest.CHARGE, (order, job) -> {}), () -> {
                    await("the warning", () -> !logs.at(Level.WARN, "takes no part in maintenance").isEmpty());
                    assertFalse(worker.runsMaintenance());
                    assertEquals(0, holders(schema));
                });
            }
            assertEquals(1, logs.at(Level.WARN, "takes no part in maintenance").size(), "said once");
        }
    }

    @Test
    void aWorkersClientPrunesFinishedJobsOnceTheirKeyIsFreeAndTheirRetentionPassed() throws Exception {
        String schema = TestDatabase.freshSchema();
        Maintenance quick = Maintenance.builder().interval(Duration.ofMillis(100)).completedRetention(Duration.ZERO)
                .build();
        try (FlexiQ queue = FlexiQ.builder(TestDatabase.url()).schema(schema).migrate(true).maintenance(quick).build()) {
            EnqueueOptions held = EnqueueOptions.builder().idempotencyKey("held").build();
            EnqueueOptions brief = EnqueueOptions.builder().idempotencyKey("brief")
                    .keyRetention(Duration.ofMillis(300)).build();
            String heldId = queue.enqueue(EnqueueTest.CHARGE, ORDER, held);
            String briefId = queue.enqueue(EnqueueTest.CHARGE, ORDER, brief);
            String plainId = queue.enqueue(EnqueueTest.CHARGE, ORDER);
            WorkerTest.running(queue.worker().handle(EnqueueTest.CHARGE, (order, job) -> {}), () -> {
                await("the job without a key to be deleted", () -> queue.getJob(plainId).isEmpty());
                await("the job whose key expired to be deleted", () -> queue.getJob(briefId).isEmpty());
                assertTrue(queue.runsMaintenance());
            });
            // Its key held for 24 hours, the first job stays, and a replay still finds it.
            assertEquals(JobState.COMPLETED, WorkerTest.job(queue, heldId).state());
            EnqueueResult replay = queue.enqueueWithResult(EnqueueTest.CHARGE, ORDER, held);
            assertEquals(EnqueueOutcome.REPLAYED, replay.outcome());
            assertEquals(heldId, replay.jobId());
            assertEquals(0, queue.runMaintenance().deleted());
        }
    }

    @Test
    void aPassOnDemandRescuesTheExpiredLeaseOfAQueueNobodyWorksAndReleasesExpiredKeys() throws Exception {
        String schema = TestDatabase.freshSchema();
        try (FlexiQ queue = FlexiQ.builder(TestDatabase.url()).schema(schema).migrate(true).build()) {
            List<JobEvent> events = new CopyOnWriteArrayList<>();
            queue.addListener(new FlexiQListener() {
                @Override
                public void onJob(JobEvent event) {
                    events.add(event);
                }
            });
            String orphan = queue.enqueue(EnqueueTest.CHARGE, ORDER, EnqueueOptions.builder().queue("nobody").build());
            String keyed = queue.enqueue(EnqueueTest.CHARGE, ORDER, EnqueueOptions.builder().idempotencyKey("k").build());
            TestDatabase.execute(
                    "UPDATE " + schema + ".jobs SET state = 'running', attempt = 1, started_at = now(),"
                            + " lease_expires_at = now() - interval '1 second' WHERE id = " + orphan,
                    "UPDATE " + schema + ".jobs SET state = 'completed', finished_at = now() WHERE id = " + keyed,
                    "UPDATE " + schema + ".jobs SET held_until = now() - interval '1 second' WHERE id = " + keyed);

            MaintenanceReport report = queue.runMaintenance();

            assertEquals(new MaintenanceReport(1, 1, 0, 0, 0, 0, 0, false), report);
            assertEquals(JobState.RETRYABLE, WorkerTest.job(queue, orphan).state());
            assertFalse(WorkerTest.job(queue, keyed).keyHeld());
            await("the rescue's event", () -> events.stream()
                    .anyMatch(e -> e.kind() == JobEvent.Kind.RESCUED && e.jobId().equals(orphan)));
        }
    }
}
