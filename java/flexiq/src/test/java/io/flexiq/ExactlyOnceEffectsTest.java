package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.test.PostgresServer;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Worker JVMs killed with SIGKILL at random moments, and PostgreSQL crashing among the kills,
 * while their handler writes one row per run into a table with no unique constraint. Completed
 * in the handler's own transaction, every job ends completed with exactly one row; completed the
 * ordinary way, rows repeat. {@code -Dflexiq.test.effectKills} (default 20) and
 * {@code -Dflexiq.test.effectJobs} (default 400) set the scale; a crash of PostgreSQL comes every
 * tenth kill.
 */
class ExactlyOnceEffectsTest {
    private static final int KILLS = Integer.getInteger("flexiq.test.effectKills", 20);
    private static final int JOBS = Integer.getInteger("flexiq.test.effectJobs", 400);
    private static final int CRASH_EVERY = 10;
    /** Short, so that killed workers' jobs are rescued soon. */
    private static final long LEASE_MILLIS = 1_000;
    private static final long WORK_MILLIS = 100;
    private static PostgresServer pg;

    @BeforeAll
    static void start() {
        // Durable, as crashes are part of the test: what committed must survive them.
        pg = PostgresServer.builder().durable(true).start();
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    /** What a run came to. */
    private record Outcome(long completed, long otherwise, long withoutOneRow, long rows, long repeats, int kills,
            int crashes, long millis) {
        @Override
        public String toString() {
            return completed + " jobs completed, " + otherwise + " not, " + withoutOneRow
                    + " completed jobs without exactly one row, " + rows + " rows, " + repeats + " repeated rows, "
                    + kills + " kills, " + crashes + " crashes of PostgreSQL, " + millis + " ms";
        }
    }

    @Test
    void completedInTheHandlersTransactionEveryJobHasExactlyOneEffect() throws Exception {
        Outcome o = run("transaction");
        System.out.println("completion in the handler's transaction: " + o);
        assertEquals(JOBS, o.completed(), o.toString());
        assertEquals(0, o.withoutOneRow(), o.toString());
        assertEquals(JOBS, o.rows(), o.toString());
    }

    @Test
    void completedTheOrdinaryWayEffectsRepeat() throws Exception {
        Outcome o = run("plain");
        System.out.println("ordinary completion: " + o);
        assertEquals(JOBS, o.completed(), o.toString());
        // Each kill lands on up to 4 handlers that wrote their row and had not completed (they
        // spend nearly all their time there): their jobs run again and write again.
        assertTrue(o.repeats() > 0, o.toString());
    }

    private static Outcome run(String mode) throws Exception {
        String schema = TestDatabase.freshSchema();
        String table = "effects_" + schema;
        long start = System.nanoTime();
        Random random = new Random();
        int kills = 0;
        int crashes = 0;
        try (FlexiQ queue = FlexiQ.builder(pg.url()).schema(schema).migrate(true).build()) {
            sql("CREATE TABLE " + table + " (job_id text NOT NULL, attempt int NOT NULL)");
            List<EnqueueTest.Order> orders = new ArrayList<>();
            for (int i = 0; i < JOBS; i++) {
                orders.add(new EnqueueTest.Order(i, i));
            }
            // Every kill and crash ends the attempts it lands on: enough attempts for all of them.
            queue.enqueueMany(EnqueueTest.CHARGE, orders, EnqueueOptions.builder().maxAttempts(1_000)
                    .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(10))).build());
            while (kills < KILLS && unfinished(schema) > 0) {
                Process child = child(schema, table, mode);
                awaitReady(child, schema);
                Thread.sleep(100 + random.nextInt(600));
                child.destroyForcibly(); // SIGKILL: no shutdown hook, no outcome recorded
                assertTrue(child.waitFor(30, TimeUnit.SECONDS));
                kills++;
                if (kills % CRASH_EVERY == 0) {
                    pg.crash();
                    pg.restart();
                    crashes++;
                }
            }
            Process last = child(schema, table, mode);
            awaitReady(last, schema);
            WorkerTest.await("every job to finish", () -> {
                try {
                    return unfinished(schema) == 0;
                } catch (Exception e) {
                    return false;
                }
            });
            last.getOutputStream().close();
            assertTrue(last.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, last.exitValue());
            return new Outcome(
                    number("SELECT count(*) FROM " + schema + ".jobs WHERE state = 'completed'"),
                    number("SELECT count(*) FROM " + schema + ".jobs WHERE state <> 'completed'"),
                    number("SELECT count(*) FROM " + schema + ".jobs j WHERE j.state = 'completed' AND"
                            + " (SELECT count(*) FROM " + table + " e WHERE e.job_id = j.id::text) <> 1"),
                    number("SELECT count(*) FROM " + table),
                    number("SELECT count(*) - count(DISTINCT job_id) FROM " + table),
                    kills, crashes, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        }
    }

    private static Process child(String schema, String table, String mode) throws Exception {
        return new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), EffectChild.class.getName(), pg.url(), pg.jdbcUrl(),
                schema, table, mode, Long.toString(LEASE_MILLIS), Long.toString(WORK_MILLIS))
                .redirectError(ProcessBuilder.Redirect.appendTo(workersLog(schema)))
                .start();
    }

    /** Where the worker processes of a run log. */
    private static File workersLog(String schema) {
        return new File(System.getProperty("java.io.tmpdir"), "flexiq-" + schema + "-workers.log");
    }

    /** Waits for the child's "ready": its worker runs. */
    private static void awaitReady(Process child, String schema) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        assertEquals("ready", out.readLine(), "the worker process's first line; its log: " + workersLog(schema));
    }

    private static long unfinished(String schema) throws Exception {
        return number("SELECT count(*) FROM " + schema + ".jobs WHERE finished_at IS NULL");
    }

    private static void sql(String statement) throws Exception {
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
            s.execute(statement);
        }
    }

    private static long number(String query) throws Exception {
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement();
                ResultSet r = s.executeQuery(query)) {
            r.next();
            return r.getLong(1);
        }
    }
}
