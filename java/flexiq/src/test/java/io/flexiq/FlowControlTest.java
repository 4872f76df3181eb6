package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Debounce, throttle and deadlines through the Java API, across processes, on a real PostgreSQL. */
class FlowControlTest {
    /** The payload the child processes send: the key again, and a stamp naming the call. */
    public record Update(String key, String stamp) {}

    private record Call(String key, String stamp, EnqueueOutcome outcome, String reason, String jobId, long start,
            long end) {}

    private static final int PROCESSES = 3;

    @Test
    void debouncedBurstsFromThreeProcessesRunOncePerKeyWithTheLastAcceptedPayload() throws Exception {
        String url = TestDatabase.url();
        String schema = TestDatabase.freshSchema();
        long period = 300;
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).migrate(true).build()) {
            Map<String, String> ranStamp = new ConcurrentHashMap<>();
            ConcurrentLinkedQueue<String> runs = new ConcurrentLinkedQueue<>();
            List<Call> calls = new ArrayList<>();
            WorkerTest.running(queue.worker().pollInterval(Duration.ofMillis(50)).concurrency(4)
                    .handle(FlowChild.UPDATE, (u, job) -> {
                        runs.add(job.jobId());
                        ranStamp.put(job.jobId(), u.stamp());
                    }), () -> {
                        calls.addAll(runChildren(url, schema, "debounce", period, 2_000, 2_000));
                        WorkerTest.await("every job to finish", () -> unfinished(schema) == 0);
                    });
            assertEquals(2_000, calls.size());
            Map<String, List<Call>> byJob = calls.stream()
                    .filter(c -> c.outcome == EnqueueOutcome.ACCEPTED || c.outcome == EnqueueOutcome.REPLACED)
                    .collect(Collectors.groupingBy(Call::jobId));
            for (Call c : calls) {
                boolean refused = c.outcome == EnqueueOutcome.NON_REPLACEABLE && c.reason.equals("NOT_PENDING");
                assertTrue(byJob.containsKey(c.jobId) && (refused || c.reason.equals("-")), "unexpected " + c);
            }
            long accepted = calls.stream().filter(c -> c.outcome == EnqueueOutcome.ACCEPTED).count();
            assertEquals(accepted, byJob.size(), "one acceptance per job");
            assertEquals(accepted, TestDatabase.scalar("SELECT count(*) FROM " + schema + ".jobs WHERE queue = 'default'"));
            assertEquals(byJob.size(), runs.size(), "every job ran once");
            assertEquals(byJob.size(), new HashSet<>(runs).size(), "no job ran twice");

            for (Map.Entry<String, List<Call>> job : byJob.entrySet()) {
                String stamp = ranStamp.get(job.getKey());
                Call ran = job.getValue().stream().filter(c -> c.stamp.equals(stamp)).findFirst()
                        .orElseThrow(() -> new AssertionError("job " + job.getKey() + " ran " + stamp
                                + ", which no accepted call sent"));
                // A call that began after the run's payload was committed replaced it, had the job
                // still been pending: a later accepted call would be a lost update.
                for (Call c : job.getValue()) {
                    assertFalse(c.start > ran.end, "job " + job.getKey() + " ran " + ran + " but accepted " + c);
                }
            }
            // Runs per key: one per burst. A burst ends only where a key's next accepted call
            // finished a whole period after the previous one began (the job was due meanwhile);
            // on a quiet machine there is no such pause and every key runs once.
            Map<String, List<Call>> byKey = byJob.values().stream().flatMap(List::stream)
                    .collect(Collectors.groupingBy(Call::key));
            assertEquals(FlowChild.KEYS, byKey.size());
            System.out.println("debounce: " + calls.size() + " calls, " + accepted + " runs for " + byKey.size()
                    + " keys, " + calls.stream().filter(c -> c.outcome == EnqueueOutcome.NON_REPLACEABLE).count()
                    + " refused as not pending");
            for (List<Call> keyCalls : byKey.values()) {
                keyCalls.sort(Comparator.comparingLong(Call::start));
                int keyPauses = 0;
                for (int i = 1; i < keyCalls.size(); i++) {
                    if (keyCalls.get(i).end - keyCalls.get(i - 1).start >= period * 1_000) {
                        keyPauses++;
                    }
                }
                long jobs = keyCalls.stream().map(Call::jobId).distinct().count();
                assertTrue(jobs <= 1 + keyPauses, keyCalls.get(0).key + ": " + jobs + " runs, " + keyPauses + " pauses");
            }
        }
    }

    @Test
    void throttledRequestsFromThreeProcessesMakeOneJobPerWindowTouched() throws Exception {
        String url = TestDatabase.url();
        String schema = TestDatabase.freshSchema();
        long window = 500;
        FlexiQ.builder(url).schema(schema).migrate(true).build().close();
        List<Call> calls = runChildren(url, schema, "throttle", window, 600, 2_000);
        assertEquals(600, calls.size());
        Map<String, Long> created = new HashMap<>();
        Map<String, String> keyOf = new HashMap<>();
        try (Connection c = TestDatabase.jdbc("postgres"); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT id, (extract(epoch FROM created_at) * 1000000)::bigint,"
                        + " convert_from(payload, 'UTF8')::jsonb ->> 'key' FROM " + schema + ".jobs"
                        + " WHERE queue <> '" + FlowChild.WARM_UP + "'")) {
            while (r.next()) {
                created.put(Long.toString(r.getLong(1)), r.getLong(2));
                keyOf.put(Long.toString(r.getLong(1)), r.getString(3));
            }
        }
        Set<String> touched = new HashSet<>();
        for (Call c : calls) {
            long at = created.get(c.jobId);
            assertEquals(c.key, keyOf.get(c.jobId));
            touched.add(c.jobId);
            if (c.outcome == EnqueueOutcome.ACCEPTED) {
                assertTrue(at >= c.start && at <= c.end, "accepted during its call: " + c);
            } else {
                assertEquals(EnqueueOutcome.COALESCED, c.outcome, c.toString());
                assertTrue(at <= c.end && c.start < at + window * 1_000, "inside the window: " + c);
            }
        }
        assertEquals(created.keySet(), touched, "every job's window was touched by its calls");
        // Windows never overlap: each key's jobs were accepted a whole window apart.
        Map<String, List<Long>> perKey = new HashMap<>();
        created.forEach((id, at) -> perKey.computeIfAbsent(keyOf.get(id), k -> new ArrayList<>()).add(at));
        for (Map.Entry<String, List<Long>> e : perKey.entrySet()) {
            List<Long> times = e.getValue();
            times.sort(null);
            for (int i = 1; i < times.size(); i++) {
                assertTrue(times.get(i) - times.get(i - 1) >= window * 1_000, e.getKey() + " " + times);
            }
            // Back to back windows: as many as the key's span of calls needs, given the longest
            // pause between its calls (a window can end in a pause and the next open after it).
            List<Call> keyCalls = calls.stream().filter(c -> c.key.equals(e.getKey()))
                    .sorted(Comparator.comparingLong(Call::start)).collect(Collectors.toList());
            long span = keyCalls.get(keyCalls.size() - 1).end - keyCalls.get(0).start;
            long pause = 0;
            for (int i = 1; i < keyCalls.size(); i++) {
                pause = Math.max(pause, keyCalls.get(i).end - keyCalls.get(i - 1).start);
            }
            long fewest = 1 + span / (window * 1_000 + pause);
            long most = 1 + (span + window * 1_000 - 1) / (window * 1_000);
            assertTrue(times.size() >= fewest && times.size() <= most,
                    e.getKey() + ": " + times.size() + " windows for " + span + " µs of calls, pauses up to " + pause);
        }
        assertEquals(FlowChild.KEYS, perKey.size());
    }

    @Test
    void aJobWhoseDeadlinePassesBeforeItStartsIsDeadLetteredWithoutRunning() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            ConcurrentLinkedQueue<JobEvent> events = new ConcurrentLinkedQueue<>();
            queue.addListener(new FlexiQListener() {
                @Override
                public void onJob(JobEvent event) {
                    events.add(event);
                }
            });
            Instant now = Instant.now();
            String late = queue.enqueue(FlowChild.UPDATE, new Update("late", "x"), EnqueueOptions.builder()
                    .uniqueKey("late").runAt(now.plusMillis(400)).deadline(now.plusMillis(200)).build());
            String onTime = queue.enqueue(FlowChild.UPDATE, new Update("on-time", "y"), EnqueueOptions.builder()
                    .deadline(now.plusSeconds(60)).build());
            ConcurrentLinkedQueue<String> ran = new ConcurrentLinkedQueue<>();
            WorkerTest.running(queue.worker().pollInterval(Duration.ofMillis(50))
                    .handle(FlowChild.UPDATE, (u, job) -> ran.add(job.jobId())), () -> {
                        WorkerTest.await("the late job to be dead",
                                () -> WorkerTest.job(queue, late).state() == JobState.DEAD);
                        WorkerTest.await("the other job to complete",
                                () -> WorkerTest.job(queue, onTime).state() == JobState.COMPLETED);
                        WorkerTest.await("the dead letter to be heard", () -> events.stream()
                                .anyMatch(e -> e.kind() == JobEvent.Kind.DEAD_LETTERED && e.jobId().equals(late)));
                    });
            assertEquals(List.of(onTime), List.copyOf(ran));
            JobInfo info = WorkerTest.job(queue, late);
            assertTrue(info.lastError().orElseThrow().contains("passed before attempt 1 could start"),
                    info.lastError().toString());
            assertFalse(info.keyHeld(), "a dead job's key is released");
            assertEquals(EnqueueOutcome.ACCEPTED, queue.enqueueWithResult(FlowChild.UPDATE, new Update("late", "x"),
                    EnqueueOptions.builder().uniqueKey("late").build()).outcome());
        }
    }

    @Test
    void optionsThatExcludeEachOtherAreRefusedWhenBuilt() {
        assertThrows(IllegalArgumentException.class,
                () -> EnqueueOptions.builder().debounce(Duration.ofSeconds(1)).throttle(Duration.ofSeconds(1)).build());
        assertThrows(IllegalArgumentException.class, () -> EnqueueOptions.builder().maxWait(Duration.ofSeconds(1)).build());
        assertThrows(IllegalArgumentException.class,
                () -> EnqueueOptions.builder().debounce(Duration.ofSeconds(1)).delay(Duration.ofSeconds(1)).build());
        assertThrows(IllegalArgumentException.class,
                () -> EnqueueOptions.builder().throttle(Duration.ofSeconds(1)).keyRetention(Duration.ZERO).build());
        assertThrows(IllegalArgumentException.class, () -> EnqueueOptions.builder().debounce(Duration.ZERO));
        IllegalArgumentException unkeyed = assertThrows(IllegalArgumentException.class, () -> {
            try (FlexiQ queue = TestDatabase.client()) {
                queue.enqueue(FlowChild.UPDATE, new Update("k", "s"),
                        EnqueueOptions.builder().throttle(Duration.ofSeconds(1)).build());
            }
        });
        assertTrue(unkeyed.getMessage().contains("give the job a key"), unkeyed.getMessage());
    }

    private static long unfinished(String schema) {
        try {
            return TestDatabase.scalar("SELECT count(*) FROM " + schema + ".jobs WHERE state <> 'completed'"
                    + " AND queue <> '" + FlowChild.WARM_UP + "'");
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Runs the child processes from one instant; returns every call they made. */
    private static List<Call> runChildren(String url, String schema, String mode, long period, int calls, long span)
            throws Exception {
        long startAt = System.currentTimeMillis() + 5_000;
        List<Process> children = new ArrayList<>();
        for (int i = 0; i < PROCESSES; i++) {
            int mine = calls / PROCESSES + (i < calls % PROCESSES ? 1 : 0);
            children.add(new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), FlowChild.class.getName(), url, schema, mode,
                    Long.toString(period), Long.toString(startAt), Integer.toString(mine), Long.toString(span),
                    Integer.toString(i))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start());
        }
        List<Call> all = new ArrayList<>();
        for (Process child : children) {
            String out = read(child);
            assertTrue(child.waitFor(120, TimeUnit.SECONDS), "child finished");
            assertEquals(0, child.exitValue(), "child exit code");
            for (String line : out.split("\n")) {
                if (!line.startsWith(FlowChild.CALL)) {
                    // Anything else the JVM printed: shown, not parsed; a missing call fails the count.
                    System.err.println("flow child: " + line);
                    continue;
                }
                String[] p = line.substring(FlowChild.CALL.length()).split(" ");
                all.add(new Call(p[0], p[1], EnqueueOutcome.valueOf(p[2]), p[3], p[4], Long.parseLong(p[5]),
                        Long.parseLong(p[6])));
            }
        }
        return all;
    }

    private static String read(Process p) throws IOException {
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
}
