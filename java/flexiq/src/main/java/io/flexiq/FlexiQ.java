package io.flexiq;

import io.flexiq.internal.Durations;
import io.flexiq.internal.Limits;
import io.flexiq.internal.schedule.Declarations;
import io.flexiq.internal.NativeBridge;
import io.flexiq.internal.client.Background;
import io.flexiq.internal.client.Operations;
import io.flexiq.internal.enqueue.EnqueueBatch;
import io.flexiq.internal.enqueue.StoredPayloads;
import io.flexiq.internal.observability.Listeners;
import io.flexiq.internal.observability.Trouble;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A FlexiQ client: enqueues jobs into PostgreSQL, idempotently when a key is given or derived,
 * and reads and manages them. Thread-safe; one per process and database is the usual shape.
 * Close it when done; calls after {@link #close()} throw {@link IllegalStateException}.
 *
 * <pre>{@code
 * try (FlexiQ queue = FlexiQ.builder("postgres://app@db/app").migrate(true).build()) {
 *     String id = queue.enqueue(CHARGE_CUSTOMER, order,
 *             EnqueueOptions.builder().idempotencyKey("charge:" + order.id()).build());
 * }
 * }</pre>
 *
 * <p>A keyed enqueue while a job holding that key (in that scope) is pending or running returns
 * that job's id and writes nothing; a unique index in PostgreSQL makes this hold under any
 * concurrency. Reusing a key for a different request throws
 * {@link IdempotencyConflictException}.
 */
public final class FlexiQ implements JobQueue, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FlexiQ.class);
    private final long handle;
    private final String schema;
    private final PayloadSerializer serializer;
    private final StoredPayloads storedPayloads;
    /** The retention of explicit keys when a call sets none, or null (see {@link Builder#keyRetention}). */
    private final Duration keyRetention;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Listeners listeners = new Listeners();
    /** PostgreSQL being unavailable to this client's workers, reported once for all of them. */
    private final Trouble outage = Trouble.outage(System::nanoTime);
    /** What the client does to its jobs besides enqueueing them. */
    private final Operations operations;
    /** The client's workers, schedules and part in maintenance, on threads of their own. */
    private final Background background;
    /** The schema's schedules as their declaring processes describe them. */
    private final Declarations declarations;

    private FlexiQ(long handle, String schema, PayloadSerializer serializer, StoredPayloads storedPayloads,
            Duration keyRetention, Maintenance maintenance) {
        this.handle = handle;
        this.schema = schema;
        this.serializer = serializer;
        this.storedPayloads = storedPayloads;
        this.keyRetention = keyRetention;
        this.operations = new Operations(handle, storedPayloads, maintenance, listeners);
        this.declarations = new Declarations(handle);
        this.background = new Background(this, handle, schema, serializer, declarations, storedPayloads.encodes(),
                maintenance, listeners, outage, closed::get);
    }

    /**
     * Starts a builder for a client of the database at {@code url} ({@code postgres://…}). TLS is
     * set as in libpq, by the URL's query string: {@code sslmode} ({@code disable}, {@code prefer}
     * (the default), {@code require}, {@code verify-ca} or {@code verify-full}), {@code sslrootcert}
     * (the CA certificates a verifying mode checks the server against), and {@code sslcert} with
     * {@code sslkey} (a client certificate); the {@code PGSSLMODE}, {@code PGSSLROOTCERT},
     * {@code PGSSLCERT} and {@code PGSSLKEY} environment variables stand in for absent ones.
     *
     * @throws IllegalArgumentException if the URL is empty, contains NUL or is not valid UTF-16
     */
    public static Builder builder(String url) {
        return new Builder(url);
    }

    @Override
    public <T> EnqueueResult enqueueWithResult(Task<T> task, T payload, EnqueueOptions options) {
        return one(task, payload, options).send(handle).get(0);
    }

    /** {@inheritDoc} One statement, one round trip. */
    @Override
    public <T> List<String> enqueueMany(Task<T> task, List<? extends T> payloads, EnqueueOptions options) {
        return EnqueueResult.ids(many(task, payloads, options).send(handle));
    }

    /** {@inheritDoc} One statement, one round trip. */
    @Override
    public List<EnqueueResult> enqueueManyWithResults(List<? extends EnqueueRequest<?>> requests) {
        return many(requests).send(handle);
    }

    /**
     * Enqueues a job on the application's own connection, inside the transaction it is in: the
     * job and its key exist only if that transaction commits, and workers are woken at the
     * commit, never before. Dedup is the same as {@link #enqueueWithResult(Task, Object,
     * EnqueueOptions)}'s: while another open transaction holds the same key, this call waits
     * for it, then replays its job if it committed or takes the key if it rolled back. A conflict
     * throws {@link IdempotencyConflictException} and leaves the transaction usable. FlexiQ never
     * commits, rolls back or closes the connection; with auto-commit on, the enqueue commits by
     * itself. Works with any PostgreSQL JDBC driver and pool; the connection's database must hold
     * this client's migrated schema.
     *
     * @throws TransactionRetryException if PostgreSQL must roll the transaction back
     *     (serialization failure under {@code REPEATABLE READ} or {@code SERIALIZABLE}, deadlock)
     * @throws StorageException if the statement fails otherwise (the driver's exception is the
     *     cause); the transaction must then be rolled back
     */
    public <T> EnqueueResult enqueueWithResult(Connection connection, Task<T> task, T payload,
            EnqueueOptions options) {
        return one(task, payload, options).sendOn(requireConnection(connection), handle).get(0);
    }

    /**
     * Enqueues a job on the application's connection, in its transaction (see
     * {@link #enqueueWithResult(Connection, Task, Object, EnqueueOptions)}); returns its id, or
     * the id of the job already holding its key.
     */
    public <T> String enqueue(Connection connection, Task<T> task, T payload, EnqueueOptions options) {
        return enqueueWithResult(connection, task, payload, options).jobId();
    }

    /** Enqueues a job with default options on the application's connection, in its transaction. */
    public <T> String enqueue(Connection connection, Task<T> task, T payload) {
        return enqueue(connection, task, payload, EnqueueOptions.defaults());
    }

    /**
     * Enqueues one job per payload on the application's connection, in its transaction (see
     * {@link #enqueueWithResult(Connection, Task, Object, EnqueueOptions)}), as one statement;
     * ids in input order. A conflict in any entry writes nothing and leaves the transaction
     * usable.
     */
    public <T> List<String> enqueueMany(Connection connection, Task<T> task, List<? extends T> payloads,
            EnqueueOptions options) {
        return EnqueueResult.ids(many(task, payloads, options).sendOn(requireConnection(connection), handle));
    }

    /**
     * Enqueues a batch of entries, each with its own task and options, on the application's
     * connection, in its transaction (see {@link #enqueueWithResult(Connection, Task, Object,
     * EnqueueOptions)}), as one statement; results in input order.
     */
    public List<EnqueueResult> enqueueManyWithResults(Connection connection,
            List<? extends EnqueueRequest<?>> requests) {
        return many(requests).sendOn(requireConnection(connection), handle);
    }

    private <T> EnqueueBatch one(Task<T> task, T payload, EnqueueOptions options) {
        requireOpen();
        EnqueueBatch batch = new EnqueueBatch(1, storedPayloads, keyRetention, listeners);
        batch.add(Task.require(task), payload, Objects.requireNonNull(options, "options"), serializer);
        return batch;
    }

    private <T> EnqueueBatch many(Task<T> task, List<? extends T> payloads, EnqueueOptions options) {
        requireOpen();
        Task.require(task);
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(payloads, "payloads");
        EnqueueBatch batch = new EnqueueBatch(payloads.size(), storedPayloads, keyRetention, listeners);
        for (T payload : payloads) {
            batch.add(task, payload, options, serializer);
        }
        return batch;
    }

    private EnqueueBatch many(List<? extends EnqueueRequest<?>> requests) {
        requireOpen();
        EnqueueRequest.requireEntries(requests);
        EnqueueBatch batch = new EnqueueBatch(requests.size(), storedPayloads, keyRetention, listeners);
        for (EnqueueRequest<?> request : requests) {
            add(batch, request);
        }
        return batch;
    }

    private <T> void add(EnqueueBatch batch, EnqueueRequest<T> request) {
        batch.add(request.task(), request.payload(), request.options(), serializer);
    }

    private static Connection requireConnection(Connection connection) {
        if (connection == null) {
            throw new IllegalArgumentException("connection must not be null");
        }
        return connection;
    }

    /** The job with this id, if it exists. */
    public Optional<JobInfo> getJob(String jobId) {
        requireOpen();
        return operations.getJob(jobId);
    }

    /**
     * The job that {@code key} names in {@code scope}: the job holding it, else the latest job
     * that held it (finished, its key released); empty if no job ever had it. The key is hashed in
     * the native core exactly as an enqueue hashes an explicit key: PostgreSQL sees the scope and
     * the SHA-256 only. A derived key is found through {@link DedupKeys#autoKey}. One indexed
     * statement.
     *
     * @throws IllegalArgumentException if {@code scope} or {@code key} is not one an enqueue
     *     would take (empty, too long, holding NUL)
     */
    public Optional<JobInfo> findByKey(String scope, String key) {
        requireOpen();
        return operations.findByKey(scope, key);
    }

    /**
     * One page of the jobs {@code query} asks for, newest first (by id), by keyset paging: a page
     * costs the same however deep it is, and paging with the same filters shows each job once
     * (jobs enqueued meanwhile are newer than the first page and do not show). A job that changes
     * state between pages shows where its state is when its page is read, or not at all. Dead
     * letters are {@code state(JobState.DEAD)}, each with its {@link JobInfo#lastError()}.
     *
     * <p>One statement, each state read through an index: finished jobs from the cursor on;
     * pending jobs through the index of due jobs (of the queue, when one is set: reading them is
     * proportional to the backlog); running ones through their leases.
     *
     * @throws IllegalArgumentException if the cursor is not one this method handed out
     */
    public JobPage listJobs(JobQuery query) {
        requireOpen();
        return operations.listJobs(query);
    }

    /** How far back {@link #countJobs()} counts completed and cancelled jobs: one hour. */
    public static final Duration FINISHED_COUNT_WINDOW = Duration.ofHours(1);

    /** The jobs one batch of {@link #cancelAll} or {@link #purgeAll} takes. */
    public static final int BULK_BATCH = 1000;

    /**
     * How many jobs each queue holds in each state; pairs with no jobs are left out. Counts every
     * pending ({@code AVAILABLE}, {@code SCHEDULED}, {@code RETRYABLE}), {@code RUNNING} and
     * {@code DEAD} job, and the {@code COMPLETED} and {@code CANCELLED} jobs that finished within
     * the last {@link #FINISHED_COUNT_WINDOW}: finished jobs only grow, and counting all of them
     * would read all of them. One statement, each state read through a partial index.
     */
    public List<JobCount> countJobs() {
        return countJobs(FINISHED_COUNT_WINDOW);
    }

    /**
     * As {@link #countJobs()}, counting the completed and cancelled jobs that finished within
     * {@code finishedWithin} (what is read grows with the jobs finished in it).
     *
     * @throws IllegalArgumentException unless {@code finishedWithin} is from 1 ms to 7 days
     */
    public List<JobCount> countJobs(Duration finishedWithin) {
        requireOpen();
        return operations.countJobs(finishedWithin);
    }

    /**
     * Jobs completed and dead-lettered per queue and minute over the last {@code window} (an hour
     * makes a sparkline), ordered by queue then minute. Minutes in which a queue finished nothing
     * are left out. One statement over the index of finished jobs by finish time.
     *
     * @throws IllegalArgumentException unless {@code window} is from 1 ms to 7 days
     */
    public List<Throughput> throughput(Duration window) {
        requireOpen();
        return operations.throughput(window);
    }

    /**
     * The payload of a job: the JSON its task's serializer wrote (decoded as UTF-8), for
     * operators' eyes; decoded by this client's {@link PayloadCodec} if one encoded it. Empty if
     * there is no such job. It may hold personal data: redact before showing it.
     *
     * @throws PayloadDecodeException if a codec encoded the payload and this client's codec cannot
     *     decode it (none set, another codec, a key it does not hold, altered bytes)
     */
    public Optional<String> getPayload(String jobId) {
        requireOpen();
        return operations.getPayload(jobId);
    }

    /**
     * Cancels a pending job and releases its key (unless a retention window holds it).
     *
     * @return false if the job does not exist or is not pending
     */
    public boolean cancel(String jobId) {
        requireOpen();
        return operations.cancel(jobId);
    }

    /**
     * Deletes a job that is not running; its key, kept on the job's row, goes with it whatever
     * the retention.
     *
     * @return false if the job does not exist or is running
     */
    public boolean purge(String jobId) {
        requireOpen();
        return operations.purge(jobId);
    }

    /**
     * Marks a pending or running job completed without running it (its work was done another way)
     * and releases its key, unless a retention window holds it.
     *
     * @return false if the job does not exist or has already finished
     */
    public boolean markCompleted(String jobId) {
        requireOpen();
        return operations.markCompleted(jobId);
    }

    /**
     * Releases the keys of finished jobs whose retention window has passed. New enqueues take
     * such keys over anyway; this keeps the index of held keys small. Maintenance does it at
     * every pass (see {@link Maintenance}); this does it now.
     *
     * @return how many keys were released
     */
    public long expireKeys() {
        requireOpen();
        return operations.expireKeys();
    }

    /**
     * Runs one maintenance pass now, whichever client of the schema runs maintenance (see
     * {@link Maintenance}), with this client's {@link Builder#maintenance maintenance options}:
     * releases the keys whose retention has passed, puts back to work the jobs whose lease has
     * passed (logged and published to listeners as a worker's rescue is), and deletes finished
     * jobs whose retention has passed and whose key is free, up to 100 batches. Safe while other
     * clients run passes.
     *
     * @return what the pass did
     * @throws StorageException if PostgreSQL refuses or cannot be reached
     */
    public MaintenanceReport runMaintenance() {
        requireOpen();
        return operations.runMaintenance();
    }

    /**
     * Whether this client runs its schema's maintenance: it holds the schema's maintenance lock
     * and ran the last pass (see {@link Maintenance}). False until it has built a worker, and
     * always false when maintenance is disabled.
     */
    public boolean runsMaintenance() {
        requireOpen();
        return background.runsMaintenance();
    }

    /**
     * Sets a rate limit, replacing the one its queue or concurrency key had; from the next claim
     * on, every worker of every process keeps it. Starts already counted still count.
     *
     * @throws StorageException if PostgreSQL refuses or cannot be reached
     */
    public void setRateLimit(RateLimit limit) {
        requireOpen();
        operations.setRateLimit(limit);
    }

    /**
     * Removes the rate limit of a queue.
     *
     * @return whether the queue had one
     */
    public boolean removeQueueRateLimit(String queue) {
        requireOpen();
        return operations.removeQueueRateLimit(queue);
    }

    /**
     * Removes the rate limit of a concurrency key.
     *
     * @return whether the key had one
     */
    public boolean removeConcurrencyKeyRateLimit(String key) {
        requireOpen();
        return operations.removeConcurrencyKeyRateLimit(key);
    }

    /**
     * Pauses a queue, for every worker of every process: once this returns, none of its jobs
     * starts until {@link #resumeQueue(String) resumed} (it waits for claims already under way
     * to commit, a few milliseconds). Its jobs wait, neither claimed nor lost; enqueues, keys and
     * replays work as ever; jobs already running finish, and their retries wait too. A job whose
     * deadline passes while it waits is dead-lettered, as it would be in a queue without
     * workers. The pause is stored in PostgreSQL and outlives every process; pausing a paused
     * queue changes nothing.
     *
     * @return true if the queue ran until now, false if it was paused already
     * @throws StorageException if PostgreSQL refuses or cannot be reached
     */
    public boolean pauseQueue(String queue) {
        requireOpen();
        return operations.pauseQueue(queue);
    }

    /**
     * Resumes a paused queue: its jobs start again, and idle workers on it are woken at once.
     *
     * @return true if the queue was paused, false if it was not
     * @throws StorageException if PostgreSQL refuses or cannot be reached
     */
    public boolean resumeQueue(String queue) {
        requireOpen();
        return operations.resumeQueue(queue);
    }

    /**
     * The paused queues, by name, each with when it was paused.
     *
     * @throws StorageException if PostgreSQL refuses or cannot be reached
     */
    public List<PausedQueue> pausedQueues() {
        requireOpen();
        return operations.pausedQueues();
    }

    /**
     * The attempts of a job, oldest first: each with its start and end, the process that ran it,
     * its outcome and its error with the stack trace. Attempts that failed or whose lease expired
     * are kept as they end; the one running or that completed the job is read from the job. They
     * are deleted with their job, so they are kept as long as it is. Empty for a job that never
     * started or does not exist.
     *
     * @throws StorageException if PostgreSQL refuses or cannot be reached
     */
    public List<AttemptInfo> attempts(String jobId) {
        requireOpen();
        return operations.attempts(jobId);
    }

    /**
     * Every schedule declared on this schema by any process, with its last and next tick and the
     * job of its last tick. A declaring process writes its schedule's declaration as it declares
     * it and renews it before every tick; a schedule no process declares any more stays listed
     * (its last declaration says when).
     *
     * @throws StorageException if PostgreSQL refuses or cannot be reached
     */
    public List<DeclaredSchedule> schedules() {
        requireOpen();
        return declarations.list();
    }

    /**
     * Pauses a schedule in every process that declares it: their ticks are not enqueued (each
     * process reads the pause before each tick) until it is {@link #resumeSchedule resumed}.
     *
     * @return whether it ran until now (false: paused already, or no such schedule)
     * @throws StorageException if PostgreSQL refuses or cannot be reached
     */
    public boolean pauseSchedule(String name) {
        requireOpen();
        return declarations.pause(Limits.name("schedule name", name), true);
    }

    /**
     * Resumes a paused schedule: its next tick is enqueued (ticks passed while it was paused are
     * not made up).
     *
     * @return whether it was paused
     * @throws StorageException if PostgreSQL refuses or cannot be reached
     */
    public boolean resumeSchedule(String name) {
        requireOpen();
        return declarations.pause(Limits.name("schedule name", name), false);
    }

    /**
     * Enqueues a schedule's job now, with the payload and options it was declared with, under
     * the key a tick at {@code at} would have: triggering again with the same {@code at} (a
     * double submit) returns the same job. Works whichever process declared the schedule.
     *
     * @return the job, accepted or replayed
     * @throws IllegalArgumentException if no such schedule is declared, or it cannot be triggered
     *     ({@link DeclaredSchedule#triggerable()})
     * @throws StorageException if PostgreSQL refuses or cannot be reached
     */
    public EnqueueResult triggerSchedule(String name, Instant at) {
        requireOpen();
        Objects.requireNonNull(at, "at");
        String[] job = declarations.trigger(Limits.name("schedule name", name), at);
        if (job[1].equals("conflict")) {
            throw new IllegalStateException("the key of schedule " + name + "'s tick at " + at + " is held by job "
                    + job[0] + ", enqueued for another request: the schedule was declared differently since");
        }
        return new EnqueueResult(job[0], job[1].equals("accepted") ? EnqueueOutcome.ACCEPTED
                : EnqueueOutcome.REPLAYED, null);
    }

    /**
     * How many jobs {@code filter} selects now: what a bulk action with it would take, to show
     * before it is confirmed.
     *
     * @throws StorageException if PostgreSQL refuses or cannot be reached
     */
    public long countMatching(JobFilter filter) {
        requireOpen();
        return operations.countMatching(filter);
    }

    /**
     * Cancels every pending job {@code filter} selects (its state must be available, scheduled
     * or retryable), as {@link #cancel} cancels one, releasing their keys. Bulk actions run in
     * batches of {@value #BULK_BATCH} jobs, newest first, each batch one statement and one short
     * transaction, so that enqueues and workers go on meanwhile; each job is checked again under
     * its row lock, so one a worker claimed meanwhile is left. Running it again changes nothing it
     * did. Listeners get no event per job; the client logs each bulk action and its result.
     *
     * @throws IllegalArgumentException if the filter's state is not a pending one
     * @throws StorageException if PostgreSQL refuses or cannot be reached (the batches before it
     *     stay done: run it again to finish)
     */
    public BulkResult cancelAll(JobFilter filter) {
        requireOpen();
        return operations.bulk(1, filter, null);
    }

    /**
     * Deletes every job {@code filter} selects, as {@link #purge} deletes one (their keys,
     * checkpoints and redrive keys go with them), in batches as {@link #cancelAll} runs them. A
     * job that started running meanwhile is left.
     *
     * @throws StorageException if PostgreSQL refuses or cannot be reached (the batches before it
     *     stay done: run it again to finish)
     */
    public BulkResult purgeAll(JobFilter filter) {
        requireOpen();
        return operations.bulk(2, filter, null);
    }

    /**
     * Redrives every dead job {@code filter} selects, as {@link #redrive} redrives one, in
     * batches of 50 (each redrive is a subtransaction). Each job redrives under a key of its own
     * made from {@code redriveKey} and its id, so repeating the call with the same key (a double
     * submit, a retry after a failure midway) redrives no job twice; a job whose key another
     * active job holds is left dead. {@link BulkResult#changed()} counts the jobs redriven.
     *
     * @throws IllegalArgumentException if the filter's state is not {@link JobState#DEAD}
     * @throws StorageException if PostgreSQL refuses or cannot be reached (the batches before it
     *     stay done: run it again with the same key to finish)
     */
    public BulkResult redriveAll(JobFilter filter, String redriveKey) {
        requireOpen();
        Limits.key("redriveKey", redriveKey);
        return operations.bulk(3, filter, redriveKey);
    }

    /**
     * The running workers of every process on this schema, by host, process and start: each
     * {@link Worker} registers as it starts, heartbeats every third of its lease and removes
     * its registration as it stops. A worker whose process died stays listed until maintenance
     * finds it has not heartbeat for a whole lease (30 s by default, plus up to one maintenance
     * interval); its jobs are rescued as their leases pass.
     *
     * @throws StorageException if PostgreSQL refuses or cannot be reached
     */
    public List<RegisteredWorker> workers() {
        requireOpen();
        return operations.workers();
    }

    /**
     * Puts a dead-lettered job back to work: due at once, its attempts starting over, holding its
     * dedup key again. {@code redriveKey} makes the request idempotent: repeating it (a retried
     * HTTP call, a double click) finds the redrive already made and redrives nothing.
     *
     * <p>If the job's dedup key has meanwhile been taken by a newer active job, nothing changes
     * and the result is {@link RedriveOutcome#KEY_HELD} with that job's id: two active jobs never
     * hold one key, and no unique-index error reaches the caller.
     *
     * @throws IllegalArgumentException if {@code redriveKey} was already used to redrive another job,
     *     or is empty, over 512 bytes of UTF-8, contains NUL or is not valid UTF-16
     */
    public RedriveResult redrive(String jobId, String redriveKey) {
        requireOpen();
        return operations.redrive(jobId, redriveKey);
    }

    /** The PostgreSQL schema holding this client's tables. */
    public String schema() {
        return schema;
    }

    /**
     * Grants {@code role} what a producer needs on this client's schema, and no more: to
     * enqueue (keyed, unkeyed, bulk) and read jobs. A producer cannot claim, cancel, complete or
     * delete jobs. Call it on a client connected as the schema's owner; granting again changes
     * nothing. The role then connects with {@code migrate(false)}.
     *
     * @throws IllegalArgumentException if the role does not exist or its name is not one
     *     PostgreSQL keeps (empty, over 63 bytes, or with a NUL character)
     */
    public void grantProducer(String role) {
        requireOpen();
        operations.grantProducer(role);
    }

    /**
     * Grants {@code role} what a {@link Worker} needs on this client's schema, and no more: to
     * claim jobs, extend their leases, record attempts (retries, dead letters), give jobs back,
     * rescue expired leases and keep checkpoints. A worker cannot enqueue, delete jobs, change
     * their payloads or keys, or truncate or drop anything; grant a role that also enqueues
     * both sets. Call it as the schema's owner; granting again changes nothing.
     *
     * @throws IllegalArgumentException if the role does not exist or its name is not one
     *     PostgreSQL keeps (empty, over 63 bytes, or with a NUL character)
     */
    public void grantWorker(String role) {
        requireOpen();
        operations.grantWorker(role);
    }

    /**
     * Adds a listener of this client's enqueues and of its workers' jobs (see
     * {@link FlexiQListener}); it hears what happens from now on.
     */
    public void addListener(FlexiQListener listener) {
        requireOpen();
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /**
     * Removes a listener once it has heard what happened before this call.
     *
     * @return false if it was not listening
     */
    public boolean removeListener(FlexiQListener listener) {
        return listeners.remove(listener);
    }

    /**
     * Declares a cron schedule: from now on this client enqueues {@code payload} for {@code task}
     * at every tick of {@code cron}, read in {@code zone}, with default options and
     * {@link MissedTicks#LATEST}. Every process of a service may declare the same schedule; each
     * tick is enqueued once (see {@link Schedule}).
     *
     * <pre>{@code
     * queue.schedule("nightly-report", "30 2 * * *", ZoneId.of("Europe/Berlin"), BUILD_REPORT, new Report("daily"));
     * }</pre>
     *
     * @return a handle whose {@code close()} stops the schedule on this client
     * @throws IllegalArgumentException if the name is blank or already declared on this client, the
     *     expression does not parse or never fires, or the zone is unknown
     * @throws PayloadSerializationException if the payload does not serialize
     */
    public <T> ScheduleHandle schedule(String name, String cron, ZoneId zone, Task<T> task, T payload) {
        return schedule(Schedule.builder(name, cron, task, payload).zone(zone).build());
    }

    /**
     * Declares a cron schedule (see {@link Schedule}): from now on this client enqueues its
     * ticks, on a daemon thread of its own, until the returned handle or the client is closed.
     * With {@link MissedTicks#LATEST} (the default) the latest past tick is enqueued at once,
     * unless another process already did. Each tick's job is due at the tick, holds the key
     * {@code schedule:<name>:<tick in UTC>} in the scope {@value Schedule#KEY_SCOPE}, kept until an
     * hour after the following tick, so that a process starting or running late replays it.
     * Ticks that another process declared differently (task, payload or options) are not
     * enqueued: the conflict is logged as an error.
     *
     * @return a handle whose {@code close()} stops the schedule on this client
     * @throws IllegalArgumentException if a schedule of the same name is declared on this client
     * @throws PayloadSerializationException if the payload does not serialize
     */
    public ScheduleHandle schedule(Schedule<?> schedule) {
        return background.schedule(schedule);
    }

    /** Starts a builder for a {@link Worker} running this client's jobs. */
    public Worker.Builder worker() {
        requireOpen();
        return new Worker.Builder(this);
    }

    /**
     * Applies missing schema migrations, then every function or trigger whose definition changed;
     * safe while other processes do the same.
     *
     * @return how many migrations and definitions were applied (0 when the schema was up to date)
     */
    public int migrate() {
        requireOpen();
        int applied = NativeBridge.migrate(handle);
        LOG.info("schema {}: {}", schema, applied == 0 ? "up to date" : applied + " migrations and definitions applied");
        return applied;
    }

    /**
     * How many of this library's migrations and definitions (functions, triggers) the schema
     * has not applied: 0 when it is migrated and this client's statements find what they
     * expect. Reads only, takes no lock: fit for a health check.
     */
    public int pendingMigrations() {
        requireOpen();
        return NativeBridge.pendingMigrations(handle);
    }

    /**
     * Uninstalls: closes this client's workers, drops its schema with every job, checkpoint,
     * function and trigger in it, then closes the client. Irreversible. Needs the schema's
     * owner; other clients of the schema fail from then on.
     *
     * @throws StorageException if the schema could not be dropped; the client stays open
     */
    public void dropSchema() {
        requireOpen();
        background.close();
        NativeBridge.dropSchema(handle);
        close();
    }

    /**
     * Closes the client: first its workers (each as {@link Worker#close()} does, letting running
     * handlers finish within its shutdown timeout), then its connections, once running calls
     * return. Idempotent.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            background.close();
            NativeBridge.close(handle);
            listeners.close();
            LOG.info("client of schema {} closed", schema);
        }
    }

    /** A worker built from this client: closed with it. */
    void register(Worker worker) {
        background.register(worker);
    }

    /** A worker that closed. */
    void forget(Worker worker) {
        background.forget(worker);
    }

    long handle() {
        requireOpen();
        return handle;
    }

    PayloadSerializer serializer() {
        return serializer;
    }

    StoredPayloads storedPayloads() {
        return storedPayloads;
    }

    Listeners listeners() {
        return listeners;
    }

    Trouble outage() {
        return outage;
    }

    private void requireOpen() {
        if (closed.get()) {
            throw new IllegalStateException("this FlexiQ client is closed");
        }
    }

    /** Builds a {@link FlexiQ} client. */
    public static final class Builder {
        /** The longest schema name: {@code flexiq_<schema>}, its channel, must fit in 63 bytes. */
        private static final int MAX_SCHEMA_NAME_LENGTH = 63 - "flexiq_".length();

        private final String url;
        private String directUrl;
        private PasswordSupplier passwordSupplier;
        private int poolSize = 10;
        private String schema = "flexiq";
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration acquireTimeout = Duration.ofSeconds(30);
        private boolean migrate;
        private PayloadSerializer serializer;
        private PayloadCodec codec;
        /** Codecs that only decode, by id. */
        private final Map<String, PayloadCodec> decodeOnly = new LinkedHashMap<>();
        private Duration keyRetention;
        private Maintenance maintenance = Maintenance.defaults();
        private final List<FlexiQListener> listeners = new ArrayList<>();

        private Builder(String url) {
            this.url = Limits.text("url", url);
        }

        /**
         * A URL that reaches PostgreSQL without a connection pooler that shares server sessions
         * (PgBouncer in transaction mode), for the sessions FlexiQ keeps open: the wake-up
         * listener ({@code LISTEN}) and the maintenance election. Needed, and only then, when
         * the client's URL goes through such a pooler, which {@link #build()} finds out and
         * names (default: none; those sessions go to the client's URL). The pooled URL then
         * carries every statement, each in a transaction of its own and without named prepared
         * statements. See the connections guide.
         *
         * @throws IllegalArgumentException if the URL is null, empty or holds a NUL character
         */
        public Builder directUrl(String directUrl) {
            this.directUrl = Limits.text("directUrl", directUrl);
            return this;
        }

        /**
         * Asks {@code supplier} for the password at every connection the client opens, in
         * place of the URL's (default: the URL's password, or none): for credentials that
         * expire, such as IAM authentication tokens, or that rotate. Connections already open
         * stay open; a supplier that throws fails that connection as unavailable, naming its
         * exception.
         *
         * @throws IllegalArgumentException if the supplier is null
         */
        public Builder passwordSupplier(PasswordSupplier supplier) {
            if (supplier == null) {
                throw new IllegalArgumentException("passwordSupplier must not be null");
            }
            this.passwordSupplier = supplier;
            return this;
        }

        /** The most connections the client opens (default 10). */
        public Builder poolSize(int poolSize) {
            if (poolSize < 1) {
                throw new IllegalArgumentException("poolSize must be at least 1, got " + poolSize);
            }
            this.poolSize = poolSize;
            return this;
        }

        /**
         * The PostgreSQL schema holding FlexiQ's tables (default {@code flexiq}). Its wake-up
         * channel is {@code flexiq_<schema>}, and PostgreSQL names are at most 63 bytes: hence 56.
         *
         * @throws IllegalArgumentException unless 1 to 56 characters of a-z, 0-9 and _, not starting
         *     with a digit; or for a name PostgreSQL keeps for itself ({@code pg_…},
         *     {@code information_schema})
         */
        public Builder schema(String schema) {
            if (schema == null || !schema.matches("[a-z_][a-z0-9_]{0," + (MAX_SCHEMA_NAME_LENGTH - 1) + "}")) {
                throw new IllegalArgumentException("schema name " + (schema == null ? null : '"' + schema + '"')
                        + " must be 1 to " + MAX_SCHEMA_NAME_LENGTH + " characters of a-z, 0-9 and _, not"
                        + " starting with a digit (PostgreSQL names its wake-up channel flexiq_<schema>, in"
                        + " at most 63 bytes)");
            }
            if (schema.startsWith("pg_") || schema.equals("information_schema")) {
                throw new IllegalArgumentException("schema name \"" + schema + "\" is reserved for PostgreSQL's own"
                        + " schemas (pg_… and information_schema); choose another, such as the default flexiq");
            }
            this.schema = schema;
            return this;
        }

        /**
         * How long opening a connection to PostgreSQL may take before the call fails with
         * {@link StorageUnavailableException} (default 5 s).
         *
         * @throws IllegalArgumentException unless between 1 ms and 1 day
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = Durations.setting("connectTimeout", timeout);
            return this;
        }

        /**
         * How long a call waits for one of the pool's connections when all are busy, before it
         * fails with {@link PoolExhaustedException} (default 30 s; zero fails at once). Separate
         * from {@link #connectTimeout}: a busy pool means slow or blocked statements, not an
         * unreachable server.
         *
         * @throws IllegalArgumentException unless between 0 and 1 day
         */
        public Builder acquireTimeout(Duration timeout) {
            this.acquireTimeout = Durations.settingOrZero("acquireTimeout", timeout);
            return this;
        }

        /** Whether {@link #build()} migrates the schema (see {@link FlexiQ#migrate()}; default false). */
        public Builder migrate(boolean migrate) {
            this.migrate = migrate;
            return this;
        }

        /** The payload serializer (default {@link CanonicalJsonSerializer}). */
        public Builder serializer(PayloadSerializer serializer) {
            this.serializer = Objects.requireNonNull(serializer, "serializer");
            return this;
        }

        /**
         * The codec that turns serialized payloads into the bytes stored, and back (default none:
         * payloads are stored as serialized). See {@link PayloadCodec} and
         * {@link AesGcmPayloadCodec}.
         *
         * @throws IllegalArgumentException unless the codec's id is 1 to 64 characters of a-z,
         *     A-Z, 0-9, {@code .}, {@code _} and {@code -}
         */
        public Builder payloadCodec(PayloadCodec codec) {
            checkCodecId(codec);
            this.codec = codec;
            return this;
        }

        /**
         * A codec this client decodes stored payloads with but no longer encodes with: after a
         * change to another codec (or to none), the jobs the old one stored still run. Each job
         * is decoded by the codec whose id it was stored with; may be called for several codecs.
         *
         * @throws IllegalArgumentException if the codec's id is not as {@link #payloadCodec}
         *     requires, or another decode-only codec has it
         */
        public Builder decodePayloadsWith(PayloadCodec codec) {
            String id = checkCodecId(codec);
            if (decodeOnly.putIfAbsent(id, codec) != null) {
                throw new IllegalArgumentException("two decode-only payload codecs have the id " + id
                        + "; a stored payload names its codec by id, so give each one its own");
            }
            return this;
        }

        private static String checkCodecId(PayloadCodec codec) {
            String id = Objects.requireNonNull(codec, "codec").id();
            if (id == null || !id.matches("[A-Za-z0-9._-]{1,64}")) {
                throw new IllegalArgumentException("payload codec " + codec.getClass().getName() + " has id "
                        + (id == null ? null : '"' + id + '"') + "; an id must be 1 to 64 characters of a-z,"
                        + " A-Z, 0-9, '.', '_' and '-'");
            }
            return id;
        }

        /**
         * How long, from acceptance, the binding of an explicit key ({@code uniqueKey} /
         * {@code jobId} or {@code idempotencyKey}) lasts when the call sets no
         * {@link EnqueueOptions.Builder#keyRetention keyRetention}, even after its job has
         * finished. Unset, an {@code idempotencyKey} lasts 24 hours
         * ({@link EnqueueOptions#DEFAULT_IDEMPOTENCY_KEY_RETENTION}) and a {@code uniqueKey} until
         * its job finishes. Derived keys are not affected: they free when their job finishes
         * unless the call sets a retention. Counted in whole milliseconds.
         *
         * @throws IllegalArgumentException unless between 0 and 36500 days
         */
        public Builder keyRetention(Duration retention) {
            this.keyRetention = Durations.stored("keyRetention", retention);
            return this;
        }

        /**
         * How this client takes part in its schema's maintenance (default
         * {@link Maintenance#defaults()}: from its first worker on, completed and cancelled jobs
         * kept 24 hours, dead ones 7 days); {@code Maintenance.builder().enabled(false).build()}
         * opts out. The retentions also apply to {@link FlexiQ#runMaintenance()}.
         */
        public Builder maintenance(Maintenance maintenance) {
            this.maintenance = Objects.requireNonNull(maintenance, "maintenance");
            return this;
        }

        /** Adds a listener of the client's enqueues and of its workers' jobs (see {@link FlexiQListener}). */
        public Builder listener(FlexiQListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * Connects, and migrates if asked.
         *
         * @throws StorageUnavailableException if PostgreSQL cannot be reached within the timeout,
         *     or TLS fails (a certificate file unreadable, the server's certificate refused, TLS
         *     required but not offered); the message says why
         * @throws IllegalArgumentException if the URL or its TLS settings are invalid, or the URL
         *     goes through a pooler that shares server sessions and no {@link #directUrl} is set
         */
        public FlexiQ build() {
            PayloadSerializer s = serializer != null ? serializer : new CanonicalJsonSerializer();
            long handle = NativeBridge.connect(url, directUrl, passwordSupplier, schema, poolSize, connectTimeout.toMillis(),
                    acquireTimeout.toMillis(), migrate);
            FlexiQ client = new FlexiQ(handle, schema, s, new StoredPayloads(codec, decodeOnly.values()), keyRetention,
                    maintenance);
            listeners.forEach(client.listeners::add);
            LOG.info("connected to {} (schema {}{}, pool of {})", redacted(url), schema,
                    migrate ? ", migrated" : "", poolSize);
            return client;
        }

        /** The URL without what may be secret: its user and password, and its parameters. */
        static String redacted(String url) {
            return url.replaceFirst("\\?.*$", "").replaceFirst("^([^:/]+://).*@", "$1");
        }
    }
}
