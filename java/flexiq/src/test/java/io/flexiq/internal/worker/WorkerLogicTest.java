package io.flexiq.internal.worker;

import static io.flexiq.WorkerTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import io.flexiq.CanonicalJsonSerializer;
import io.flexiq.CapturedLogs;
import io.flexiq.JobContext;
import io.flexiq.JobHandler;
import io.flexiq.StorageUnavailableException;
import io.flexiq.Task;
import io.flexiq.WorkerEdgesTest;
import io.flexiq.internal.NativeBridge;
import io.flexiq.internal.enqueue.StoredPayloads;
import io.flexiq.internal.observability.Listeners;
import io.flexiq.internal.observability.Trouble;
import io.flexiq.internal.worker.FakeWorkerStore.Attempt;
import io.flexiq.internal.worker.FakeWorkerStore.Failure;
import io.flexiq.internal.worker.FakeWorkerStore.State;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A worker's logic, its {@link WorkerEngine}, on an in-memory {@link FakeWorkerStore}: no
 * PostgreSQL, and nothing here touches the native library. Waits poll for what the worker does;
 * {@link WorkerEngine#close()} is the point after which every outcome it will record has been
 * recorded.
 */
class WorkerLogicTest {
    static final Task<String> ECHO = Task.of("echo", String.class);
    /**
     * Extended every 200 ms, so that a lost lease shows soon; long enough that a stalled test
     * machine does not let it pass (the claimer rescues passed leases every poll).
     */
    static final Duration SHORT_LEASE = Duration.ofMillis(600);

    private final FakeWorkerStore store = new FakeWorkerStore();
    /** The worker's log, where a lost lease or a late outcome shows. */
    private CapturedLogs logs;
    private WorkerEngine worker;
    /**
     * Released once the test is done: a handler that waits for it runs until it is interrupted
     * (or until the test ends, were it never interrupted).
     */
    private final CountDownLatch testDone = new CountDownLatch(1);

    @BeforeEach
    void watchLog() {
        logs = new CapturedLogs();
    }

    @AfterEach
    void closeWorker() {
        testDone.countDown();
        logs.close();
        if (worker != null) {
            worker.close();
        }
    }

    /** A worker that handles {@link #ECHO} and polls often, otherwise as {@code Worker.Builder} sets it. */
    private static Settings worker(JobHandler<String> handler) {
        return new Settings(handler);
    }

    private WorkerEngine start(Settings settings) {
        return start(settings, store);
    }

    /**
     * Starts a worker on {@code through}, of a client without codec or listeners. Its serializer
     * only reads payloads here, which never reaches the native core.
     */
    private WorkerEngine start(Settings settings, WorkerStore through) {
        worker = new WorkerEngine(settings.settings(), through, new StoredPayloads(null, List.of()),
                new CanonicalJsonSerializer(), new Listeners(), Trouble.outage(System::nanoTime), () -> { });
        worker.start();
        return worker;
    }

    /** A worker's settings, with the defaults of {@code Worker.Builder} but for a short poll interval. */
    private static final class Settings {
        private final JobHandler<String> handler;
        private List<String> queues = List.of("default");
        private int concurrency = 10;
        private int prefetch = -1;
        private int claimBatch = 100;
        private Duration lease = Duration.ofSeconds(30);
        private Duration shutdownTimeout = Duration.ofSeconds(10);

        Settings(JobHandler<String> handler) {
            this.handler = handler;
        }

        Settings queues(String... names) {
            queues = List.of(names);
            return this;
        }

        Settings concurrency(int n) {
            concurrency = n;
            return this;
        }

        Settings prefetch(int n) {
            prefetch = n;
            return this;
        }

        Settings claimBatch(int n) {
            claimBatch = n;
            return this;
        }

        Settings lease(Duration d) {
            lease = d;
            return this;
        }

        Settings shutdownTimeout(Duration d) {
            shutdownTimeout = d;
            return this;
        }

        WorkerSettings settings() {
            return new WorkerSettings(queues, Map.of(ECHO.name(), new TaskHandler<>(ECHO, handler)), concurrency,
                    prefetch < 0 ? OptionalInt.empty() : OptionalInt.of(prefetch), claimBatch, lease, Duration.ofMillis(20), shutdownTimeout,
                    null);
        }
    }

    private static long id(JobContext job) {
        return Long.parseLong(job.jobId());
    }

    private boolean warned(String text) {
        return !logs.at(Level.WARN, text).isEmpty();
    }

    @Test
    void claimedJobsOfItsQueuesAndTasksRunOnceAndAreCompletedOnce() throws Exception {
        long first = store.add("default", "echo", "a", 3, HeldAttempt.NO_TIMEOUT);
        long second = store.add("other", "echo", "b", 3, HeldAttempt.NO_TIMEOUT);
        long otherTask = store.add("other_task", "c");
        long otherQueue = store.add("elsewhere", "echo", "d", 3, HeldAttempt.NO_TIMEOUT);
        ConcurrentLinkedQueue<String> seen = new ConcurrentLinkedQueue<>();
        start(worker((payload, job) -> seen.add(job.jobId() + " " + payload + " attempt " + job.attempt() + " of "
                + job.maxAttempts() + " in " + job.queue() + " as " + job.task()))
                .queues("default", "other"));
        await("both jobs to complete",
                () -> store.state(first) == State.COMPLETED && store.state(second) == State.COMPLETED);
        worker.close();
        assertEquals(Set.of(first + " a attempt 1 of 3 in default as echo", second + " b attempt 1 of 3 in other as echo"),
                Set.copyOf(seen));
        assertEquals(2, seen.size(), "each handler ran once");
        assertEquals(Set.of(new Attempt(first, 1), new Attempt(second, 1)), Set.copyOf(store.completions()));
        assertEquals(2, store.completions().size(), "each job was completed once");
        assertEquals(State.AVAILABLE, store.state(otherTask), "a job of a task without a handler here was left alone");
        assertEquals(State.AVAILABLE, store.state(otherQueue), "a job of another queue was left alone");
        assertEquals(List.of(), store.failures());
    }

    @Test
    void aFailingHandlerRecordsEachFailedAttemptWithItsError() throws Exception {
        long id = store.add("default", "echo", "a", 2, HeldAttempt.NO_TIMEOUT);
        AtomicInteger runs = new AtomicInteger();
        start(worker((payload, job) -> {
            runs.incrementAndGet();
            throw new IllegalStateException("card declined on attempt " + job.attempt());
        }));
        await("the job to be dead-lettered", () -> store.state(id) == State.DEAD);
        worker.close();
        assertEquals(List.of(new Failure(id, 1, "java.lang.IllegalStateException: card declined on attempt 1"),
                new Failure(id, 2, "java.lang.IllegalStateException: card declined on attempt 2")),
                firstLines(store.failures()));
        assertTrue(store.failures().get(0).error().contains("\tat io.flexiq."), "the stack trace is stored");
        assertEquals(2, runs.get());
        assertEquals("java.lang.IllegalStateException: card declined on attempt 2",
                store.lastError(id).lines().findFirst().orElseThrow());
        assertEquals(List.of(), store.completions());
    }

    @Test
    void anAttemptThatLostItsLeaseIsInterruptedAndItsOutcomeIsNotRecorded() throws Exception {
        long id = store.add("echo", "a");
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        start(worker((payload, job) -> {
            started.countDown();
            try {
                testDone.await();
            } catch (InterruptedException e) {
                interrupted.set(true);
            }
            // Returns normally: were the outcome recorded, it would be a completion.
        }).lease(SHORT_LEASE));
        assertTrue(started.await(30, TimeUnit.SECONDS), "the handler started");
        store.takeOver(id);
        await("the handler to be interrupted", interrupted::get);
        worker.close();
        assertTrue(warned("attempt 1 of job " + id + " no longer holds its job"), "logged: " + logs.matching(e -> true));
        assertEquals(List.of(), store.completions());
        assertEquals(List.of(), store.failures());
        assertEquals(List.of(), store.returns(), "a lost attempt is not given back either");
        assertEquals(State.RUNNING, store.state(id), "the job stays with the attempt that took it over");
        assertEquals(2, store.attempt(id));
    }

    @Test
    void aCompletionRefusedBecauseACrashForgotTheClaimSaysSoAndTheJobRunsAgain() throws Exception {
        long id = store.add("echo", "forgotten");
        AtomicInteger runs = new AtomicInteger();
        store.forgetClaimAtComplete(id);
        start(worker((payload, job) -> runs.incrementAndGet()));
        await("the job to complete", () -> store.state(id) == State.COMPLETED);
        assertEquals(2, runs.get(), "ran again, as its claim was forgotten");
        assertTrue(warned("attempt 1 of job " + id + " succeeded, but the outcome was not recorded: PostgreSQL,"
                + " restarting after a crash, forgot this attempt's claim (a claim commits without waiting for the"
                + " disk): the job is available and runs again"), "logged: " + logs.matching(e -> true));
        assertEquals(List.of(), logs.matching(e -> e.getFormattedMessage().contains("lease had passed")),
                "no lease passed");
    }

    @Test
    void aJobClaimedAgainAfterACrashForgotItsClaimIsCompletedOnceAndItsSecondRunSaidSo() throws Exception {
        long id = store.add("echo", "twice");
        AtomicInteger runs = new AtomicInteger();
        // Completions find PostgreSQL gone until the job has run a second time.
        WorkerStore completionsWait = new ForwardingStore(store) {
            @Override
            public NativeBridge.Recorded complete(long[] ids, int[] attempts) {
                if (runs.get() < 2) {
                    throw new StorageUnavailableException("PostgreSQL is unavailable (a test's fake store)");
                }
                return super.complete(ids, attempts);
            }
        };
        start(worker((payload, job) -> {
            if (runs.incrementAndGet() == 1) {
                // The crash forgets the claim while the first run's outcome waits.
                store.forgetClaim(id);
            }
        }), completionsWait);
        await("the job to complete", () -> store.state(id) == State.COMPLETED);
        assertEquals(2, runs.get());
        // Logged by the outcome thread once the completion is recorded, a moment after the store shows it.
        await("the second run's warning", () -> warned("attempt 1 of job " + id + " succeeded a second time:"
                + " PostgreSQL, restarting after a crash, forgot this attempt's claim"));
    }

    @Test
    void aCompletionTheStoreSaysCameTooLateIsDroppedAndItsLeaseNoLongerKept() throws Exception {
        long late = store.add("echo", "late");
        long other = store.add("echo", "other");
        CountDownLatch release = new CountDownLatch(1);
        start(worker((payload, job) -> {
            if (payload.equals("other")) {
                // Keeps a lease to extend, so that the extensions show which attempts are held.
                release.await();
            }
        }).lease(SHORT_LEASE));
        store.takeOverAtComplete(late);
        await("the late completion", () -> store.completions().contains(new Attempt(late, 1)));
        int extensions = store.extended().size();
        await("two more lease extensions", () -> store.extended().size() >= extensions + 2);
        List<List<Attempt>> extended = store.extended();
        assertEquals(List.of(new Attempt(other, 1)), extended.get(extended.size() - 1),
                "only the other job's lease is still extended");
        release.countDown();
        await("the other job to complete", () -> store.state(other) == State.COMPLETED);
        worker.close();
        assertTrue(warned("attempt 1 of job " + late + " succeeded, but the outcome was not recorded: its lease had"
                + " passed, and attempt 2 of the job has started since (the job is running); that attempt decides"),
                "logged: " + logs.matching(e -> true));
        assertEquals(1, store.completions().stream().filter(a -> a.id() == late).count(), "not tried again");
        assertEquals(State.RUNNING, store.state(late), "the job stays with the attempt that took it over");
        assertEquals(List.of(), store.failures());
    }

    @Test
    void outcomesWaitOutAnOutageAndAreRecordedOnceTheStoreAnswers() throws Exception {
        long ok = store.add("echo", "ok");
        long bad = store.add("echo", "bad");
        CountDownLatch bothRunning = new CountDownLatch(2);
        CountDownLatch go = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        start(worker((payload, job) -> {
            runs.incrementAndGet();
            bothRunning.countDown();
            go.await();
            if (payload.equals("bad")) {
                throw new IllegalArgumentException("bad payload");
            }
        }).concurrency(2));
        assertTrue(bothRunning.await(30, TimeUnit.SECONDS), "both handlers started");
        store.unavailable(true);
        go.countDown();
        await("the completion to be tried three times", () -> store.calls(FakeWorkerStore.Call.COMPLETE) >= 3);
        assertEquals(State.RUNNING, store.state(ok));
        assertEquals(State.RUNNING, store.state(bad));
        store.unavailable(false);
        await("both outcomes to be recorded",
                () -> store.state(ok) == State.COMPLETED && store.state(bad) == State.DEAD);
        worker.close();
        assertEquals(List.of(new Attempt(ok, 1)), store.completions());
        assertEquals(List.of(new Failure(bad, 1, "java.lang.IllegalArgumentException: bad payload")),
                firstLines(store.failures()));
        assertEquals(2, runs.get(), "no handler ran again");
    }

    @Test
    void theJobsOfAClaimWhoseAnswerWasLostAreRecoveredByItsTokenAndRunOnce() throws Exception {
        List<Long> ids = List.of(store.add("echo", "a"), store.add("echo", "b"), store.add("echo", "c"));
        store.loseNextClaimAnswer();
        ConcurrentLinkedQueue<String> runs = new ConcurrentLinkedQueue<>();
        start(worker((payload, job) -> runs.add(job.jobId() + " attempt " + job.attempt())));
        await("the jobs to complete", () -> ids.stream().allMatch(id -> store.state(id) == State.COMPLETED));
        worker.close();
        assertEquals(store.claimTokens().get(0), store.recoveredTokens().get(0), "recovered by the lost claim's token");
        assertEquals(Set.of(ids.get(0) + " attempt 1", ids.get(1) + " attempt 1", ids.get(2) + " attempt 1"),
                Set.copyOf(runs));
        assertEquals(3, runs.size(), "each ran once");
        assertEquals(List.of(), store.failures());
    }

    @Test
    void aHandlerPastItsTimeoutIsInterruptedAndTheAttemptFails() throws Exception {
        long id = store.add("default", "echo", "a", 1, 200);
        AtomicBoolean interrupted = new AtomicBoolean();
        start(worker((payload, job) -> {
            try {
                testDone.await();
            } catch (InterruptedException e) {
                interrupted.set(true);
            }
        }));
        await("the job to be dead-lettered", () -> store.state(id) == State.DEAD);
        await("the handler to be interrupted", interrupted::get);
        worker.close();
        assertEquals(List.of(new Failure(id, 1, "timed out after 200 ms")), store.failures());
        assertEquals(List.of(), store.completions());
    }

    @Test
    void closingGivesBackRunningAndWaitingAttemptsWithoutCountingThem() throws Exception {
        long first = store.add("echo", "a");
        long second = store.add("echo", "b");
        AtomicInteger runs = new AtomicInteger();
        start(worker((payload, job) -> {
            runs.incrementAndGet();
            testDone.await();
        }).concurrency(1).prefetch(1).shutdownTimeout(Duration.ofMillis(100)));
        await("both jobs to be claimed, one running and one waiting",
                () -> store.state(first) == State.RUNNING && store.state(second) == State.RUNNING && runs.get() == 1);
        worker.close();
        assertEquals(Set.of(new Attempt(first, 1), new Attempt(second, 1)), Set.copyOf(store.returns()));
        assertEquals(2, store.returns().size());
        for (long id : List.of(first, second)) {
            assertEquals(State.AVAILABLE, store.state(id));
            assertEquals(0, store.attempt(id), "the unfinished attempt does not count");
        }
        assertEquals(List.of(), store.failures(), "the interrupted handler's exception counts for nothing");
        assertEquals(List.of(), store.completions());
        assertEquals(1, runs.get());
    }

    @Test
    void aNewAttemptWaitsWhileAnEarlierAttemptsThreadStillRuns() throws Exception {
        long id = store.add("default", "echo", "a", 3, 100);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        ConcurrentLinkedQueue<Integer> attempts = new ConcurrentLinkedQueue<>();
        start(worker((payload, job) -> {
            mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
            attempts.add(job.attempt());
            try {
                if (job.attempt() == 1) {
                    WorkerEdgesTest.awaitIgnoringInterrupts(release);
                }
            } finally {
                running.decrementAndGet();
            }
        }).concurrency(4).lease(SHORT_LEASE));
        // Attempt 1 times out, fails, and its retry is claimed while its thread still runs.
        await("attempt 2 to be claimed", () -> store.attempt(id) == 2);
        int polls = store.calls(FakeWorkerStore.Call.AWAIT_WORK);
        await("five more polls of the claimer", () -> store.calls(FakeWorkerStore.Call.AWAIT_WORK) >= polls + 5);
        assertEquals(List.of(1), List.copyOf(attempts), "attempt 2 started while attempt 1's thread ran");
        await("the waiting attempt's lease to be kept", () -> store.extended().stream()
                .anyMatch(named -> named.contains(new Attempt(id, 2))));
        release.countDown();
        await("the job to complete", () -> store.state(id) == State.COMPLETED);
        worker.close();
        assertEquals(List.of(1, 2), List.copyOf(attempts));
        assertEquals(1, mostAtOnce.get());
        assertEquals(List.of(new Failure(id, 1, "timed out after 100 ms")), store.failures());
        assertEquals(List.of(new Attempt(id, 2)), store.completions());
    }

    @Test
    void claimsRunFourBatchesAheadOfRecordedOutcomesAndNoFurther() throws Exception {
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            ids.add(store.add("echo", "job " + i));
        }
        AtomicInteger claimed = new AtomicInteger();
        AtomicInteger completed = new AtomicInteger();
        AtomicInteger mostOutstanding = new AtomicInteger();
        CountDownLatch completionsAnswer = new CountDownLatch(1);
        // Completions that hang, as over a stalled database, until the test has seen the claims
        // stop: a handler that returned frees its slot, but the worker claims at most four
        // batches more than it has recorded.
        WorkerStore slowCompletions = new ForwardingStore(store) {
            @Override
            public int claim(String[] queues, String[] tasks, int limit, long leaseMillis, long token,
                    ClaimBuffer out) {
                int got = super.claim(queues, tasks, limit, leaseMillis, token, out);
                mostOutstanding.accumulateAndGet(claimed.addAndGet(got) - completed.get(), Math::max);
                return got;
            }

            @Override
            public NativeBridge.Recorded complete(long[] ids, int[] attempts) {
                try {
                    completionsAnswer.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                NativeBridge.Recorded done = super.complete(ids, attempts);
                completed.addAndGet(done.ids().length);
                return done;
            }
        };
        start(worker((payload, job) -> {}).concurrency(1).prefetch(0).claimBatch(2), slowCompletions);
        try {
            // One running (concurrency 1, prefetch 0) plus four batches of two whose handlers returned.
            await("nine claimed attempts unrecorded", () -> claimed.get() - completed.get() >= 9);
            // The claimer goes round once each poll, putting back passed leases first: two rounds
            // more, and it had every chance to claim past the limit.
            int rescues = store.calls(FakeWorkerStore.Call.RESCUE_EXPIRED);
            await("two more rounds of the claimer",
                    () -> store.calls(FakeWorkerStore.Call.RESCUE_EXPIRED) >= rescues + 2);
            assertEquals(9, claimed.get() - completed.get(), "claimed no further while no outcome was recorded");
        } finally {
            completionsAnswer.countDown();
        }
        await("the jobs to complete", () -> ids.stream().allMatch(id -> store.state(id) == State.COMPLETED));
        worker.close();
        // One running (concurrency 1, prefetch 0) plus four batches of two whose handlers returned.
        assertEquals(9, mostOutstanding.get(), "claimed attempts whose completion was not recorded yet");
    }

    @Test
    void byDefaultQuickJobsAreClaimedAClaimBatchAtATimeOnceTheirPaceIsKnown() throws Exception {
        List<Integer> limits = claimLimits(400, (payload, job) -> {});
        assertTrue(limits.get(0) <= 4, "the first claim, at a prefetch of the concurrency: " + limits);
        assertEquals(100, limits.stream().mapToInt(Integer::intValue).max().orElse(0),
                "quick handlers, concurrency 2: claims of the claim batch " + limits);
    }

    @Test
    void byDefaultSlowJobsAreClaimedNoFurtherAheadThanTheConcurrency() throws Exception {
        List<Integer> limits = claimLimits(12, (payload, job) -> Thread.sleep(60));
        // Two 60 ms handlers finish under two jobs in 50 ms: the prefetch stays at the concurrency.
        assertTrue(limits.stream().allMatch(n -> n <= 4), "claims of concurrency 2 plus prefetch 2: " + limits);
    }

    /** The limits of the claims of a worker of concurrency 2, defaults otherwise, that ran {@code jobs} jobs. */
    private List<Integer> claimLimits(int jobs, JobHandler<String> handler) throws Exception {
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            ids.add(store.add("echo", "job " + i));
        }
        List<Integer> limits = new CopyOnWriteArrayList<>();
        WorkerStore recording = new ForwardingStore(store) {
            @Override
            public int claim(String[] queues, String[] tasks, int limit, long leaseMillis, long token,
                    ClaimBuffer out) {
                limits.add(limit);
                return super.claim(queues, tasks, limit, leaseMillis, token, out);
            }
        };
        start(worker(handler).concurrency(2), recording);
        await("the jobs to complete", () -> ids.stream().allMatch(id -> store.state(id) == State.COMPLETED));
        worker.close();
        return limits;
    }

    /** The failures with the first line of their errors: what threw, without the stack trace. */
    private static List<Failure> firstLines(List<Failure> failures) {
        return failures.stream().map(f -> new Failure(f.id(), f.attempt(), f.error().lines().findFirst().orElse("")))
                .toList();
    }
}
