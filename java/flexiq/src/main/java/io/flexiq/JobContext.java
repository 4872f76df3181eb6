package io.flexiq;

import io.flexiq.internal.Limits;
import io.flexiq.internal.worker.Checkpoints;
import java.util.Objects;
import java.util.concurrent.Callable;

/** The attempt a {@link JobHandler} runs: which job, which attempt, and its checkpoints. */
public final class JobContext {
    private final Checkpoints checkpoints;
    private final PayloadSerializer serializer;
    private final long jobId;
    private final int attempt;
    private final int maxAttempts;
    private final String queue;
    private final String task;

    JobContext(Checkpoints checkpoints, PayloadSerializer serializer, long jobId, int attempt, int maxAttempts,
            String queue, String task) {
        this.checkpoints = checkpoints;
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
     * the next attempt: only the system performing the effect can close that last gap.
     *
     * @throws IllegalArgumentException if the name is empty, over 128 bytes of UTF-8, contains NUL
     *     or is not valid UTF-16
     * @throws IllegalStateException if this attempt no longer holds the job (its lease passed)
     */
    public <V> V checkpoint(String name, Class<V> type, Callable<V> stage) throws Exception {
        Limits.name("checkpoint name", name);
        Objects.requireNonNull(type, "type");
        byte[] stored = checkpoints.load(name);
        if (stored != null) {
            return serializer.deserialize(stored, type);
        }
        V value = stage.call();
        if (!checkpoints.save(name, serializer.serialize(value))) {
            throw new IllegalStateException("attempt " + attempt + " of job " + jobId
                    + " no longer holds the job; checkpoint " + name + " was not stored");
        }
        return value;
    }
}
