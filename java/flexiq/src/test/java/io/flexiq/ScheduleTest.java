package io.flexiq;

import static io.flexiq.WorkerTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import io.flexiq.test.PostgresServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Cron schedules against a real PostgreSQL: one job per tick across processes, missed ticks, conflicts, closing. */
class ScheduleTest {
    /** The payload of the test schedules. */
    public record Beat(String note) {}

    static final Task<Beat> TICK = Task.of("tick", Beat.class);
    /** Ticks of schedules that only show time passing for the others: not counted as ticks. */
    static final Task<Beat> WITNESS = Task.of("witness", Beat.class);

    /** The once-a-second schedule every process of the first test declares. */
    static Schedule<Beat> everySecond(MissedTicks missed) {
        return Schedule.builder("every-second", "* * * * * *", TICK, new Beat("beat")).missedTicks(missed).build();
    }

    /**
     * A once-a-minute schedule at second {@code (now + secondsAhead) mod 60}: its latest tick is
     * {@code 60 - secondsAhead} seconds ago, its next {@code secondsAhead} seconds ahead.
     */
    private static Schedule.Builder<Beat> oncePerMinute(String name, int secondsAhead, Beat payload) {
        int second = (Instant.now().atZone(ZoneOffset.UTC).getSecond() + secondsAhead) % 60;
        return Schedule.builder(name, second + " * * * * *", TICK, payload);
    }

    @Test
    void threeProcessesDeclaringOneScheduleEnqueueEachTickOnce() throws Exception {
        String url = TestDatabase.url();
        String schema = TestDatabase.freshSchema();
        FlexiQ.builder(url).schema(schema).migrate(true).build().close();
        List<Process> children = new ArrayList<>();
        List<BufferedReader> outputs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Process child = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xcheck:jni", "-cp", System.getProperty("java.class.path"), ScheduleChild.class.getName(), url,
                    schema)
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            children.add(child);
            outputs.add(new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)));
        }
        // Every child up and connected, however long its JVM took to start: then the instants.
        for (BufferedReader out : outputs) {
            assertEquals("ready", out.readLine(), "child started");
        }
        // Declared half a second past a whole second, closed ten seconds later: ticks 1 to 10.
        long startAt = (System.currentTimeMillis() / 1000 + 1) * 1000 + 500;
        long stopAt = startAt + 10_000;
        for (Process child : children) {
            child.getOutputStream().write((startAt + " " + stopAt + "\n").getBytes(StandardCharsets.UTF_8));
            child.getOutputStream().flush();
        }
        int accepted = 0;
        int replayed = 0;
        for (int c = 0; c < children.size(); c++) {
            Process child = children.get(c);
            String out = outputs.get(c).lines().collect(java.util.stream.Collectors.joining("\n"));
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "child finished");
            assertEquals(0, child.exitValue(), "child exit code");
            for (String line : out.split("\n")) {
                String[] parts = line.trim().split(" ");
                if (parts[0].equals("accepted")) {
                    accepted += Integer.parseInt(parts[1]);
                } else if (parts[0].equals("replayed")) {
                    replayed += Integer.parseInt(parts[1]);
                }
            }
        }
        List<Instant> ticks = new ArrayList<>();
        Set<String> digests = new HashSet<>();
        try (Connection c = TestDatabase.jdbc("postgres"); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT run_at, key_scope, encode(key_digest, 'hex') FROM " + schema
                        + ".jobs WHERE task = 'tick' ORDER BY run_at")) {
            while (r.next()) {
                Instant tick = r.getTimestamp(1).toInstant();
                ticks.add(tick);
                assertEquals(Schedule.KEY_SCOPE, r.getString(2));
                assertEquals(EnqueueTest.sha256Hex("schedule:every-second:" + tick), r.getString(3), "key of " + tick);
                digests.add(r.getString(3));
            }
        }
        System.out.printf("3 processes, 10 s: %d ticks, %d accepted, %d replayed%n", ticks.size(), accepted, replayed);
        assertTrue(ticks.size() >= 9 && ticks.size() <= 11, "ticks enqueued: " + ticks);
        assertEquals(ticks.size(), new HashSet<>(ticks).size(), "a tick enqueued twice: " + ticks);
        assertEquals(ticks.size(), digests.size(), "distinct tick keys");
        for (Instant tick : ticks) {
            assertEquals(tick, tick.truncatedTo(ChronoUnit.SECONDS), "ticks are whole seconds");
            assertTrue(!tick.isBefore(Instant.ofEpochMilli(startAt)) && !tick.isAfter(Instant.ofEpochMilli(stopAt)),
                    tick + " between declaration and close");
        }
        assertEquals(ticks.size(), accepted, "each tick accepted by one process");
        assertTrue(replayed > 0, "the other processes replayed ticks: " + replayed);
    }

    @Test
    void latestMissedTickIsEnqueuedOnceAndReplayedByALaterProcess() throws Exception {
        String url = TestDatabase.url();
        String schema = TestDatabase.freshSchema();
        List<EnqueueEvent> later = new CopyOnWriteArrayList<>();
        Schedule<Beat> missed = oncePerMinute("missed", 30, new Beat("m")).build();
        try (FlexiQ first = FlexiQ.builder(url).schema(schema).migrate(true).build();
                FlexiQ second = FlexiQ.builder(url).schema(schema).build()) {
            Instant declared = Instant.now();
            first.schedule(missed);
            await("the latest missed tick", () -> jobs(schema, "") == 1);
            Instant tick = runAts(schema).get(0);
            assertTrue(tick.isBefore(declared) && tick.isAfter(declared.minusSeconds(60)), "latest tick " + tick);
            assertEquals(missed.cron().split(" ")[0], Integer.toString(tick.atZone(ZoneOffset.UTC).getSecond()));
            // The key is held until an hour after the next tick (a minute after this one), counted from acceptance.
            assertEquals(60 + 3600, TestDatabase.scalar("SELECT extract(epoch FROM retain_until - created_at)::bigint FROM "
                    + schema + ".jobs"), "key retention in seconds");

            second.addListener(new FlexiQListener() {
                @Override
                public void onEnqueue(EnqueueEvent event) {
                    later.add(event);
                }
            });
            second.schedule(missed);
            await("the second client's enqueue", () -> !later.isEmpty());
            assertEquals(EnqueueOutcome.REPLAYED, later.get(0).outcome().orElseThrow(), "second client replays");
            assertEquals(List.of(tick), runAts(schema), "still the one job");

            // SKIP: the past ticks are left alone; the next one, three seconds ahead, comes.
            Instant skipDeclared = Instant.now();
            first.schedule(oncePerMinute("skipped", 3, new Beat("s")).missedTicks(MissedTicks.SKIP).build());
            // Its first tick comes after anything it would have enqueued for past ticks.
            await("the next tick", () -> jobs(schema, " AND run_at > to_timestamp(" + skipDeclared.toEpochMilli()
                    + " / 1000.0)") > 0);
            assertEquals(2, jobs(schema, ""), "SKIP enqueued nothing for past ticks: " + runAts(schema));
            Instant next = runAts(schema).get(1);
            assertTrue(next.isAfter(skipDeclared), "SKIP's first tick " + next + " comes after " + skipDeclared);
        }
    }

    @Test
    void aConflictingDeclarationIsLoggedAndEnqueuesNothing() throws Exception {
        String url = TestDatabase.url();
        String schema = TestDatabase.freshSchema();
        int secondsAhead = 30;
        try (CapturedLogs logs = new CapturedLogs();
                FlexiQ first = FlexiQ.builder(url).schema(schema).migrate(true).build();
                FlexiQ second = FlexiQ.builder(url).schema(schema).build()) {
            Schedule<Beat> one = oncePerMinute("report", secondsAhead, new Beat("one")).build();
            first.schedule(one);
            await("the first declaration's tick", () -> jobs(schema, "") == 1);
            Schedule<Beat> other = Schedule.builder("report", one.cron(), TICK, new Beat("other")).build();
            second.schedule(other);
            await("the conflict's error", () -> !logs.at(Level.ERROR, "differs in payload").isEmpty());
            String error = logs.at(Level.ERROR, "differs in payload").get(0).getFormattedMessage();
            assertTrue(error.contains("schedule report"), error);
            assertEquals(1, jobs(schema, ""), "the conflicting declaration enqueued nothing");
            assertEquals(1, jobs(schema, " AND convert_from(payload, 'UTF8')::jsonb->>'note' = 'one'"), "the first declaration's job stays");
        }
    }

    @Test
    void closingTheHandleOrTheClientStopsTicks() throws Exception {
        String url = TestDatabase.url();
        String schema = TestDatabase.freshSchema();
        FlexiQ queue = FlexiQ.builder(url).schema(schema).migrate(true).build();
        try {
            ScheduleHandle handle = queue.schedule(everySecond(MissedTicks.SKIP));
            IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
                    () -> queue.schedule(everySecond(MissedTicks.SKIP)));
            assertTrue(twice.getMessage().contains("schedule every-second is already declared"), twice.getMessage());
            // Another schedule of the same client, ticking each second as well, shows the ticks
            // that came due after a close.
            queue.schedule(Schedule.builder("witness", "* * * * * *", WITNESS, new Beat("w")).build());
            await("two ticks", () -> jobs(schema, "") >= 2);
            handle.close();
            long atClose = jobs(schema, "");
            awaitWitnessTicks(schema, 2);
            assertEquals(atClose, jobs(schema, ""), "no tick after the handle closed");

            // Closed, the name can be declared again; closing the client stops it too. Another
            // client's schedule shows the ticks due after that.
            queue.schedule(everySecond(MissedTicks.SKIP));
            await("a tick after declaring again", () -> jobs(schema, "") > atClose);
            try (FlexiQ witness = FlexiQ.builder(url).schema(schema).build()) {
                witness.schedule(Schedule.builder("witness-2", "* * * * * *", WITNESS, new Beat("w")).build());
                queue.close();
                long atClientClose = jobs(schema, "");
                awaitWitnessTicks(schema, 2);
                assertEquals(atClientClose, jobs(schema, ""), "no tick after the client closed");
            }
            assertThrows(IllegalStateException.class, () -> queue.schedule(everySecond(MissedTicks.SKIP)));
        } finally {
            queue.close();
        }
    }

    @Test
    void anOutageSkipsTheTicksItSpansAndIsReportedOnce() throws Exception {
        try (PostgresServer pg = PostgresServer.builder().durable(false).start();
                CapturedLogs logs = new CapturedLogs();
                FlexiQ queue = FlexiQ.builder(pg.url()).schema("outage").migrate(true).build()) {
            ScheduleHandle handle = queue.schedule(everySecond(MissedTicks.SKIP));
            await("two ticks", () -> ticks(pg).size() >= 2);
            pg.shutDown();
            // The outage itself: it must span ticks (three seconds' at the least, asserted below).
            Thread.sleep(3_500);
            pg.restart();
            int before = ticks(pg).size();
            await("ticks after the outage", () -> ticks(pg).size() >= before + 2);
            // Ended by the first success two seconds after the last failure (see Trouble).
            await("the outage's end to be logged",
                    () -> !logs.at(Level.INFO, "reaching PostgreSQL works again after").isEmpty());
            handle.close();
            List<Instant> ticks = ticks(pg);
            assertEquals(ticks.size(), new HashSet<>(ticks).size(), "a tick enqueued twice: " + ticks);
            long longestGap = 0;
            for (int i = 1; i < ticks.size(); i++) {
                longestGap = Math.max(longestGap, ticks.get(i).getEpochSecond() - ticks.get(i - 1).getEpochSecond());
            }
            // Not made up for afterwards: the ticks the outage spanned are missing.
            assertTrue(longestGap >= 3, "ticks " + ticks);
            List<String> logged = logs.matching(e -> e.getLevel().isGreaterOrEqual(Level.WARN)
                    || e.getFormattedMessage().contains("works again")).stream()
                    .map(e -> e.getLevel() + " " + e.getFormattedMessage()).toList();
            assertEquals(1, logs.matching(e -> e.getLevel() == Level.WARN).size(), logged.toString());
            assertTrue(logged.get(0).contains("enqueueing ticks of schedule every-second"), logged.toString());
            assertEquals(1, logs.at(Level.INFO, "reaching PostgreSQL works again after").size(), logged.toString());
        }
    }

    /** The ticks enqueued in the outage test's server, or none while it is down. */
    private static List<Instant> ticks(PostgresServer pg) {
        List<Instant> out = new ArrayList<>();
        try (Connection c = java.sql.DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT run_at FROM outage.jobs ORDER BY run_at")) {
            while (r.next()) {
                out.add(r.getTimestamp(1).toInstant());
            }
        } catch (java.sql.SQLException e) {
            return List.of();
        }
        return out;
    }

    @Test
    void declarationsSayWhatToFix() {
        try (FlexiQ queue = TestDatabase.client()) {
            assertEquals("invalid cron expression \"0 2 * *\"", refusal(() ->
                    Schedule.builder("r", "0 2 * *", TICK, new Beat("b")).build()).split(":")[0]);
            assertTrue(refusal(() -> Schedule.builder("r", "0 2 * * *", TICK, new Beat("b"))
                    .zone(ZoneOffset.ofHours(2)).build())
                    .startsWith("unknown time zone \"+02:00\" for cron expression \"0 2 * * *\": use an IANA zone name"));
            assertTrue(refusal(() -> Schedule.builder("r", "0 0 30 2 *", TICK, new Beat("b")).build())
                    .contains("has no tick after"));
            assertEquals("schedule name must not be blank",
                    refusal(() -> Schedule.builder(" ", "* * * * *", TICK, new Beat("b")).build()));
            assertEquals("schedule name must not be empty",
                    refusal(() -> Schedule.builder("", "* * * * *", TICK, new Beat("b")).build()));
            assertTrue(refusal(() -> Schedule.builder("r", "* * * * *", TICK, new Beat("b"))
                    .options(EnqueueOptions.builder().idempotencyKey("k").build()))
                    .startsWith("the options of schedule r set idempotencyKey: leave it out"));
            assertTrue(refusal(() -> Schedule.builder("r", "* * * * *", TICK, new Beat("b"))
                    .options(EnqueueOptions.builder().delay(java.time.Duration.ofSeconds(1)).build()))
                    .startsWith("the options of schedule r set delay"));
            assertTrue(refusal(() -> Schedule.builder("r", "* * * * *", TICK, new Beat("b"))
                    .options(EnqueueOptions.builder().throttle(java.time.Duration.ofSeconds(1)).build()))
                    .startsWith("the options of schedule r set throttle"));
            // UTC as an offset is UTC; a region zone is read as itself.
            Schedule.builder("r", "0 2 * * *", TICK, new Beat("b")).zone(ZoneOffset.UTC).build();
            Schedule.builder("r", "0 2 * * *", TICK, new Beat("b")).zone(ZoneId.of("Europe/Berlin")).build();
            assertThrows(IllegalArgumentException.class, () -> queue.schedule(null));
        }
    }

    private static String refusal(org.junit.jupiter.api.function.Executable call) {
        return assertThrows(IllegalArgumentException.class, call).getMessage();
    }

    private static long jobs(String schema, String where) {
        try {
            return TestDatabase.scalar("SELECT count(*) FROM " + schema + ".jobs WHERE task = 'tick'" + where);
        } catch (java.sql.SQLException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Waits until witness schedules have enqueued {@code n} ticks due after this call: every
     * once-a-second tick due before the last of them has come due meanwhile.
     */
    private static void awaitWitnessTicks(String schema, int n) throws Exception {
        long since = TestDatabase.scalar("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint");
        await(n + " witness ticks", () -> WorkerTest.scalar("SELECT count(DISTINCT run_at) FROM " + schema
                + ".jobs WHERE task = 'witness' AND run_at > to_timestamp(" + since + " / 1000000.0)") >= n);
    }

    private static List<Instant> runAts(String schema) throws Exception {
        List<Instant> out = new ArrayList<>();
        try (Connection c = TestDatabase.jdbc("postgres"); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT run_at FROM " + schema + ".jobs WHERE task = 'tick' ORDER BY run_at")) {
            while (r.next()) {
                out.add(r.getTimestamp(1).toInstant());
            }
        }
        return out;
    }
}
