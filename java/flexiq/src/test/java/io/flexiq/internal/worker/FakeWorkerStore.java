package io.flexiq.internal.worker;

import io.flexiq.JobState;
import io.flexiq.StorageUnavailableException;
import io.flexiq.internal.NativeBridge;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link WorkerStore} in memory, for testing a worker's logic without PostgreSQL or the native
 * library. Its jobs keep state, attempt, lease and claim token as the core's statements keep
 * them, and each call answers as the interface promises: an attempt holds its job while the job
 * runs that attempt. Retries are due at once. Tests disturb it through its knobs: calls that
 * throw {@link StorageUnavailableException}, a claim whose answer is lost after it took its jobs,
 * and a job taken over by another worker (its lease passed).
 *
 * <p>Every call records what it was asked, for the tests to read: {@link #calls(Call)} counts
 * every call, the lists hold what the answered calls named.
 */
final class FakeWorkerStore implements WorkerStore {
    enum Call { CLAIM, RECOVER_CLAIM, COMPLETE, EXTEND_LEASES, FAIL, RETURN_ATTEMPTS, RESCUE_EXPIRED, AWAIT_WORK }

    enum State { AVAILABLE, RUNNING, RETRYABLE, COMPLETED, DEAD }

    /** A job as the core keeps it. Guarded by the store. */
    static final class Job {
        final long id;
        final String queue;
        final String task;
        final byte[] payload;
        final int maxAttempts;
        /** Milliseconds, or {@link HeldAttempt#NO_TIMEOUT}. */
        final long timeoutMillis;
        State state = State.AVAILABLE;
        int attempt;
        long leaseExpiresNanos;
        long claimToken;
        String lastError;

        Job(long id, String queue, String task, byte[] payload, int maxAttempts, long timeoutMillis) {
            this.id = id;
            this.queue = queue;
            this.task = task;
            this.payload = payload;
            this.maxAttempts = maxAttempts;
            this.timeoutMillis = timeoutMillis;
        }
    }

    /** One call of {@link #fail}. */
    record Failure(long id, int attempt, String error) {}

    /** One attempt named in a call. */
    record Attempt(long id, int attempt) {}

    private final TreeMap<Long, Job> jobs = new TreeMap<>();
    private final Map<Call, AtomicInteger> calls = new EnumMap<>(Call.class);
    private final List<Failure> failures = new ArrayList<>();
    private final List<Attempt> completions = new ArrayList<>();
    private final List<Attempt> returns = new ArrayList<>();
    private final List<List<Attempt>> extended = new ArrayList<>();
    private final List<Long> claimTokens = new ArrayList<>();
    private final List<Long> recoveredTokens = new ArrayList<>();
    private volatile boolean unavailable;
    private boolean loseNextClaimAnswer;
    private long takeOverAtComplete;
    private long forgetClaimAtComplete;
    private final Map<String, byte[]> checkpoints = new HashMap<>();
    private long nextId = 1;

    FakeWorkerStore() {
        for (Call c : Call.values()) {
            calls.put(c, new AtomicInteger());
        }
    }

    /** Adds a job due now, its payload a JSON string; returns its id. */
    synchronized long add(String queue, String task, String payload, int maxAttempts, long timeoutMillis) {
        long id = nextId++;
        byte[] json = ('"' + payload + '"').getBytes(StandardCharsets.UTF_8);
        jobs.put(id, new Job(id, queue, task, json, maxAttempts, timeoutMillis));
        return id;
    }

    /** Adds a job of queue {@code default} with one attempt and no timeout; returns its id. */
    long add(String task, String payload) {
        return add("default", task, payload, 1, HeldAttempt.NO_TIMEOUT);
    }

    synchronized State state(long id) {
        return jobs.get(id).state;
    }

    synchronized int attempt(long id) {
        return jobs.get(id).attempt;
    }

    synchronized String lastError(long id) {
        return jobs.get(id).lastError;
    }

    /** While true, every call throws {@link StorageUnavailableException} and changes nothing. */
    void unavailable(boolean unavailable) {
        this.unavailable = unavailable;
    }

    /** The next claim that takes jobs commits, then throws as if the connection broke before its answer. */
    synchronized void loseNextClaimAnswer() {
        loseNextClaimAnswer = true;
    }

    /**
     * Another worker takes the running job over, as after its lease passed and it was rescued and
     * claimed again: the attempt running it here no longer holds it.
     */
    synchronized void takeOver(long id) {
        Job j = jobs.get(id);
        if (j.state != State.RUNNING) {
            throw new IllegalStateException("job " + id + " is " + j.state + ", not running");
        }
        j.attempt++;
        j.claimToken = 0;
        j.leaseExpiresNanos = System.nanoTime() + 60_000_000_000L;
    }

    /**
     * Another worker takes job {@code id} over just before the next {@link #complete} naming it:
     * its lease passed while the attempt's outcome was on its way.
     */
    synchronized void takeOverAtComplete(long id) {
        takeOverAtComplete = id;
    }

    /**
     * PostgreSQL forgets the claim of job {@code id}'s running attempt just before the next
     * {@link #complete} naming it, as a crash does to a claim whose commit had not reached the
     * disk: the job is available again, at the attempt before.
     */
    synchronized void forgetClaimAtComplete(long id) {
        forgetClaimAtComplete = id;
    }

    /**
     * PostgreSQL forgets the claim of job {@code id}'s running attempt now, as a crash does to a
     * claim whose commit had not reached the disk: the job is available again, at the attempt
     * before.
     */
    synchronized void forgetClaim(long id) {
        Job j = jobs.get(id);
        j.state = State.AVAILABLE;
        j.attempt--;
    }

    /** How many calls were made, answered or not. */
    int calls(Call call) {
        return calls.get(call).get();
    }

    /** What answered calls of {@link #fail} named, whether the attempt held its job or not. */
    synchronized List<Failure> failures() {
        return List.copyOf(failures);
    }

    /** The attempts that answered calls of {@link #complete} named, whether they held their job or not. */
    synchronized List<Attempt> completions() {
        return List.copyOf(completions);
    }

    /** The attempts that answered calls of {@link #returnAttempts} named. */
    synchronized List<Attempt> returns() {
        return List.copyOf(returns);
    }

    /** Each call of {@link #extendLeases}: the attempts it named. */
    synchronized List<List<Attempt>> extended() {
        return List.copyOf(extended);
    }

    synchronized List<Long> claimTokens() {
        return List.copyOf(claimTokens);
    }

    synchronized List<Long> recoveredTokens() {
        return List.copyOf(recoveredTokens);
    }

    private void called(Call call) {
        calls.get(call).incrementAndGet();
        if (unavailable) {
            throw new StorageUnavailableException("PostgreSQL is unavailable (a test's fake store)");
        }
    }

    private boolean holds(Job j, int attempt) {
        return j != null && j.state == State.RUNNING && j.attempt == attempt;
    }

    @Override
    public synchronized int claim(String[] queues, String[] tasks, int limit, long leaseMillis, long token,
            ClaimBuffer out) {
        called(Call.CLAIM);
        claimTokens.add(token);
        int got = 0;
        for (Job j : jobs.values()) {
            if (got == limit) {
                break;
            }
            boolean due = j.state == State.AVAILABLE || j.state == State.RETRYABLE;
            if (due && index(queues, j.queue) >= 0 && index(tasks, j.task) >= 0) {
                j.state = State.RUNNING;
                j.attempt++;
                j.leaseExpiresNanos = System.nanoTime() + leaseMillis * 1_000_000;
                j.claimToken = token;
                write(out, got++, j, queues, tasks);
            }
        }
        if (got > 0 && loseNextClaimAnswer) {
            loseNextClaimAnswer = false;
            throw new StorageUnavailableException("PostgreSQL is unavailable: the connection broke after the claim");
        }
        return got;
    }

    @Override
    public synchronized int recoverClaim(String[] queues, String[] tasks, long leaseMillis, long token,
            ClaimBuffer out) {
        called(Call.RECOVER_CLAIM);
        recoveredTokens.add(token);
        int got = 0;
        for (Job j : jobs.values()) {
            if (j.state == State.RUNNING && j.claimToken == token) {
                j.leaseExpiresNanos = System.nanoTime() + leaseMillis * 1_000_000;
                write(out, got++, j, queues, tasks);
            }
        }
        return got;
    }

    private static void write(ClaimBuffer out, int i, Job j, String[] queues, String[] tasks) {
        out.ids[i] = j.id;
        out.attempts[i] = j.attempt;
        out.maxAttempts[i] = j.maxAttempts;
        out.timeouts[i] = j.timeoutMillis;
        out.queueIndexes[i] = index(queues, j.queue);
        out.taskIndexes[i] = index(tasks, j.task);
        out.payloads[i] = j.payload;
    }

    private static int index(String[] names, String name) {
        return Arrays.asList(names).indexOf(name);
    }

    @Override
    public synchronized NativeBridge.Recorded complete(long[] ids, int[] attempts) {
        called(Call.COMPLETE);
        List<Long> done = new ArrayList<>();
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] == takeOverAtComplete) {
                takeOverAtComplete = 0;
                takeOver(ids[i]);
            }
            if (ids[i] == forgetClaimAtComplete) {
                forgetClaimAtComplete = 0;
                forgetClaim(ids[i]);
            }
            completions.add(new Attempt(ids[i], attempts[i]));
            Job j = jobs.get(ids[i]);
            if (holds(j, attempts[i])) {
                j.state = State.COMPLETED;
                done.add(ids[i]);
            }
        }
        return new NativeBridge.Recorded(done.stream().mapToLong(Long::longValue).toArray(), new boolean[done.size()]);
    }

    @Override
    public synchronized long[] extendLeases(long[] ids, int[] attempts, long leaseMillis) {
        called(Call.EXTEND_LEASES);
        List<Attempt> named = new ArrayList<>();
        List<Long> kept = new ArrayList<>();
        for (int i = 0; i < ids.length; i++) {
            named.add(new Attempt(ids[i], attempts[i]));
            Job j = jobs.get(ids[i]);
            if (holds(j, attempts[i])) {
                j.leaseExpiresNanos = System.nanoTime() + leaseMillis * 1_000_000;
                kept.add(ids[i]);
            }
        }
        extended.add(Collections.unmodifiableList(named));
        return kept.stream().mapToLong(Long::longValue).toArray();
    }

    @Override
    public synchronized NativeBridge.Failed fail(long id, int attempt, String error) {
        called(Call.FAIL);
        failures.add(new Failure(id, attempt, error));
        Job j = jobs.get(id);
        if (!holds(j, attempt)) {
            return null;
        }
        j.lastError = error;
        if (j.attempt < j.maxAttempts) {
            j.state = State.RETRYABLE;
            return new NativeBridge.Failed(false, System.currentTimeMillis() * 1_000, false);
        }
        j.state = State.DEAD;
        return new NativeBridge.Failed(true, 0, false);
    }

    @Override
    public synchronized long[] returnAttempts(long[] ids, int[] attempts) {
        called(Call.RETURN_ATTEMPTS);
        List<Long> returned = new ArrayList<>();
        for (int i = 0; i < ids.length; i++) {
            returns.add(new Attempt(ids[i], attempts[i]));
            Job j = jobs.get(ids[i]);
            if (holds(j, attempts[i])) {
                j.state = State.AVAILABLE;
                j.attempt--;
                returned.add(ids[i]);
            }
        }
        return returned.stream().mapToLong(Long::longValue).toArray();
    }

    @Override
    public synchronized List<NativeBridge.JobAttempt> attemptsNow(long[] ids) {
        List<NativeBridge.JobAttempt> now = new ArrayList<>();
        for (long id : ids) {
            Job j = jobs.get(id);
            if (j != null) {
                now.add(new NativeBridge.JobAttempt(id, j.attempt, JobState.valueOf(j.state.name())));
            }
        }
        return now;
    }

    @Override
    public synchronized List<NativeBridge.Rescued> rescueExpired() {
        called(Call.RESCUE_EXPIRED);
        List<NativeBridge.Rescued> rescued = new ArrayList<>();
        long now = System.nanoTime();
        for (Job j : jobs.values()) {
            if (j.state == State.RUNNING && j.leaseExpiresNanos - now < 0) {
                j.state = j.attempt < j.maxAttempts ? State.RETRYABLE : State.DEAD;
                j.lastError = "lease expired during attempt " + j.attempt;
                rescued.add(new NativeBridge.Rescued(j.id, j.queue, j.task, j.attempt, j.maxAttempts,
                        j.state == State.DEAD, false, j.lastError));
            }
        }
        return rescued;
    }

    @Override
    public long workGeneration() {
        return 0;
    }

    /** Waits out the timeout: the workers under test find work by polling. */
    @Override
    public long awaitWork(long seen, long timeoutMillis) {
        called(Call.AWAIT_WORK);
        WorkerEngine.sleep(timeoutMillis);
        return seen;
    }

    @Override
    public void wakeWorkers() {
    }

    @Override
    public void heartbeat(Registration registration) {
        // The fake keeps no registrations: the worker's logic does not read them.
    }

    @Override
    public void deregister(String id) {
    }

    @Override
    public synchronized byte[] checkpoint(long id, String name) {
        return checkpoints.get(id + "/" + name);
    }

    @Override
    public synchronized boolean saveCheckpoint(long id, int attempt, String name, byte[] value) {
        if (!holds(jobs.get(id), attempt)) {
            return false;
        }
        checkpoints.put(id + "/" + name, value);
        return true;
    }

    @Override
    public NativeBridge.TransactionStatements transactionStatements() {
        throw new UnsupportedOperationException("the fake store runs no SQL on an application's connection");
    }
}
