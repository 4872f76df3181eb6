package io.flexiq;

import io.flexiq.internal.Limits;
import io.flexiq.internal.worker.AttemptStore;
import java.sql.Connection;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.function.Consumer;

/**
 * The attempt a {@link JobHandler} runs: which job, which attempt, its checkpoints, and its
 * completion in the handler's own transaction.
 */
public final class JobContext {
    private final AttemptStore store;
    private final PayloadSerializer serializer;
    private final long jobId;
    private final int attempt;
    private final int maxAttempts;
    private final String queue;
    private final String task;

    JobContext(AttemptStore store, PayloadSerializer serializer, long jobId, int attempt, int maxAttempts,
            String queue, String task) {
        this.store = store;
        this.serializer = serializer;
        this.jobId = jobId;
        this.attempt = attempt;
        this.maxAttempts = maxAttempts;
        this.queue = queue;
        this.task = task;
    }

    /** The job's id: stable across attempts, fit to be an external system's idempotency key. */
    public String jobId() {
        return Long.toString(jobId);
    }

    /** This attempt's number, from 1. */
    public int attempt() {
        return attempt;
    }

    /** The job's attempt budget. */
    public int maxAttempts() {
        return maxAttempts;
    }

    /** The queue the job came from. */
    public String queue() {
        return queue;
    }

    /** The job's task name. */
    public String task() {
        return task;
    }

    /**
     * Runs a stage once per job: if an earlier attempt of this job stored a checkpoint under
     * {@code name}, returns its value without running {@code stage}; otherwise runs the stage,
     * stores its result durably (at most 64 KiB once serialized) and returns it.
     *
     * <p>A crash between the stage's effect and the checkpoint's commit runs the stage again on
     * the next attempt: only the system performing the effect can close that last gap. Where
     * that system is this database, {@link #checkpoint(Connection, String, Class, Callable)}
     * closes it.
     *
     * @throws IllegalArgumentException if the name is empty, over 128 bytes of UTF-8, contains NUL
     *     or is not valid UTF-16
     * @throws IllegalStateException if this attempt no longer holds the job (its lease passed)
     */
    public <V> V checkpoint(String name, Class<V> type, Callable<V> stage) throws Exception {
        return checkpoint(name, type, stage, value -> {
            if (!store.save(name, value)) {
                throw new IllegalStateException("attempt " + attempt + " of job " + jobId
                        + " no longer holds the job; checkpoint " + name + " was not stored");
            }
        });
    }

    /**
     * Like {@link #checkpoint(String, Class, Callable)}, but stores the checkpoint on
     * {@code connection}, inside the transaction it is in: a stage that writes to this database
     * on the same connection commits its effect and its checkpoint together, or neither. Later
     * attempts see the checkpoint once that transaction has committed.
     *
     * @param connection a connection to the client's database, auto-commit off, whose role has
     *     the worker's privileges ({@link FlexiQ#grantWorker})
     * @throws JobLeaseLostException if this attempt no longer holds the job: roll the
     *     transaction back
     * @throws IllegalStateException if the connection is in auto-commit
     * @throws IllegalArgumentException if the name is not a valid checkpoint name, or the value
     *     is over 64 KiB once serialized
     * @throws StorageException if the statement failed: roll the transaction back
     */
    public <V> V checkpoint(Connection connection, String name, Class<V> type, Callable<V> stage) throws Exception {
        Objects.requireNonNull(connection, "connection");
        return checkpoint(name, type, stage, value -> {
            if (!store.saveIn(connection, name, value)) {
                throw new JobLeaseLostException("attempt " + attempt + " of job " + jobId + " no longer holds the"
                        + " job (its lease passed and a later attempt took it, or the job is finished): checkpoint "
                        + name + " was not stored; roll the transaction back");
            }
        });
    }

    /** The stored value of checkpoint {@code name}, or the stage's, serialized and handed to {@code save}. */
    private <V> V checkpoint(String name, Class<V> type, Callable<V> stage, Consumer<byte[]> save) throws Exception {
        Limits.name("checkpoint name", name);
        Objects.requireNonNull(type, "type");
        byte[] stored = store.load(name);
        if (stored != null) {
            return serializer.deserialize(stored, type);
        }
        V value = stage.call();
        save.accept(serializer.serialize(value));
        return value;
    }

    /**
     * Completes this job inside the transaction {@code connection} is in: the job is completed
     * if and only if that transaction commits, so the handler's writes on the same connection
     * happen exactly once, even when a worker dies or PostgreSQL restarts at any moment. Call it
     * last, just before the commit: from this call on the worker stops extending the attempt's
     * lease, and the job's row stays locked until the transaction ends. In a Spring transaction
     * the starter calls it at the commit of a {@code @Transactional} handler method.
     *
     * <p>When the handler then returns, the worker checks that the transaction committed; if it
     * did not (rolled back, or still open), the attempt fails and the job is retried under its
     * retry policy. If the attempt's lease has passed and a later attempt took the job, this
     * throws and the transaction must be rolled back: the later attempt does the work.
     *
     * @param connection a connection to the client's database, auto-commit off, whose role has
     *     the worker's privileges ({@link FlexiQ#grantWorker})
     * @throws JobLeaseLostException if this attempt no longer holds the job (or this
     *     transaction completed it already): roll the transaction back
     * @throws IllegalStateException if the connection is in auto-commit
     * @throws StorageException if the statement failed: roll the transaction back
     */
    public void completeIn(Connection connection) {
        Objects.requireNonNull(connection, "connection");
        store.completesInTransaction();
        if (!store.completeIn(connection)) {
            throw new JobLeaseLostException("attempt " + attempt + " of job " + jobId + " no longer holds the job"
                    + " (its lease passed and a later attempt took it, or the job is finished), so it was not"
                    + " completed; roll the transaction back, so that the handler's writes in it are undone");
        }
    }

    /**
     * Says, before its transaction commits, that this job is to be completed in a transaction of
     * the handler's, by {@link #completeIn} at its commit (as the Spring starter does for a
     * {@code @Transactional} handler): should the handler return without that transaction having
     * committed the completion (it rolled back before reaching it), the attempt fails and the job
     * is retried, rather than completed as the handler returns. For frameworks that run
     * {@code completeIn} in a commit hook; a handler that calls {@code completeIn} itself need not
     * call this.
     */
    public void completesInTransaction() {
        store.completesInTransaction();
    }
}
