package io.flexiq.internal.worker;

import io.flexiq.Worker;
import io.flexiq.internal.NativeBridge;
import java.util.List;

/**
 * The storage calls a {@link Worker} makes, one method per core statement. The worker's parts
 * talk to PostgreSQL only through this, so that their logic reads as what it does.
 */
public interface WorkerStore {
    /** Claims up to {@code limit} due jobs under a lease, marked {@code token}, into {@code out}; returns how many. */
    int claim(String[] queues, String[] tasks, int limit, long leaseMillis, long token, ClaimBuffer out);

    /** The jobs the claim marked {@code token} took and still runs, leases renewed, into {@code out}. */
    int recoverClaim(String[] queues, String[] tasks, long leaseMillis, long token, ClaimBuffer out);

    /** Completes the attempts' jobs; returns those recorded, late ones (after a rescue) marked. */
    NativeBridge.Recorded complete(long[] ids, int[] attempts);

    /** Extends the attempts' leases; returns the ids whose attempt still holds its job. */
    long[] extendLeases(long[] ids, int[] attempts, long leaseMillis);

    /** Records a failed attempt: where it left the job, or null when a later attempt has started. */
    NativeBridge.Failed fail(long id, int attempt, String error);

    /** Gives back unfinished attempts, not counted; returns how many. */
    long[] returnAttempts(long[] ids, int[] attempts);

    /** Where the jobs stand now (attempt number and state), to say why an outcome was refused. */
    List<NativeBridge.JobAttempt> attemptsNow(long[] ids);

    /** Puts back to work running jobs whose lease has passed (dead-letters those with no attempts left); returns them. */
    List<NativeBridge.Rescued> rescueExpired();

    /** The wake-up generation. */
    long workGeneration();

    /** Waits until the wake-up generation moves past {@code seen} or the timeout passes. */
    long awaitWork(long seen, long timeoutMillis);

    /** Wakes this client's waiting workers. */
    void wakeWorkers();

    /** A job's checkpoint, or null. */
    byte[] checkpoint(long id, String name);

    /** Stores a checkpoint while the attempt holds its job; false when it no longer does. */
    boolean saveCheckpoint(long id, int attempt, String name, byte[] value);

    /** Registers the worker, or renews its registration. */
    void heartbeat(Registration registration);

    /** Removes the worker's registration. */
    void deregister(String id);

    /** The statements a handler runs in its own transaction (see {@link ApplicationTransaction}). */
    NativeBridge.TransactionStatements transactionStatements();
}
