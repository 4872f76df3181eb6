package io.flexiq.internal.worker;

import io.flexiq.internal.NativeBridge;
import java.util.List;

/** {@link WorkerStore} over the native core, for one client handle. */
public final class NativeWorkerStore implements WorkerStore {
    private final long handle;
    /** Read once, on first use. */
    private volatile NativeBridge.TransactionStatements transactionStatements;

    public NativeWorkerStore(long handle) {
        this.handle = handle;
    }

    @Override
    public int claim(String[] queues, String[] tasks, int limit, long leaseMillis, long token, ClaimBuffer out) {
        return NativeBridge.claim(handle, queues, tasks, limit, leaseMillis, token, out.ids, out.attempts,
                out.maxAttempts, out.timeouts, out.queueIndexes, out.taskIndexes, out.payloads, out.payloadCodecs,
                out.waitedMicros, out.traceContexts);
    }

    @Override
    public int recoverClaim(String[] queues, String[] tasks, long leaseMillis, long token, ClaimBuffer out) {
        return NativeBridge.recoverClaim(handle, queues, tasks, leaseMillis, token, out.ids, out.attempts,
                out.maxAttempts, out.timeouts, out.queueIndexes, out.taskIndexes, out.payloads, out.payloadCodecs,
                out.waitedMicros, out.traceContexts);
    }

    @Override
    public NativeBridge.Recorded complete(long[] ids, int[] attempts) {
        return NativeBridge.complete(handle, ids, attempts);
    }

    @Override
    public long[] extendLeases(long[] ids, int[] attempts, long leaseMillis) {
        return NativeBridge.extendLeases(handle, ids, attempts, leaseMillis);
    }

    @Override
    public NativeBridge.Failed fail(long id, int attempt, String error) {
        return NativeBridge.fail(handle, id, attempt, error);
    }

    @Override
    public long[] returnAttempts(long[] ids, int[] attempts) {
        return NativeBridge.returnAttempts(handle, ids, attempts);
    }

    @Override
    public List<NativeBridge.JobAttempt> attemptsNow(long[] ids) {
        return NativeBridge.attemptsNow(handle, ids);
    }

    @Override
    public List<NativeBridge.Rescued> rescueExpired() {
        return NativeBridge.rescueExpired(handle);
    }

    @Override
    public long workGeneration() {
        return NativeBridge.workGeneration(handle);
    }

    @Override
    public long awaitWork(long seen, long timeoutMillis) {
        return NativeBridge.awaitWork(handle, seen, timeoutMillis);
    }

    @Override
    public void wakeWorkers() {
        NativeBridge.wakeWorkers(handle);
    }

    @Override
    public byte[] checkpoint(long id, String name) {
        return NativeBridge.checkpoint(handle, id, name);
    }

    @Override
    public boolean saveCheckpoint(long id, int attempt, String name, byte[] value) {
        return NativeBridge.saveCheckpoint(handle, id, attempt, name, value);
    }

    @Override
    public NativeBridge.TransactionStatements transactionStatements() {
        NativeBridge.TransactionStatements statements = transactionStatements;
        if (statements == null) {
            statements = NativeBridge.transactionStatements(handle);
            transactionStatements = statements;
        }
        return statements;
    }

    @Override
    public void heartbeat(Registration r) {
        NativeBridge.heartbeat(handle, r.id(), r.name(), r.queues(), r.tasks(), r.concurrency(), r.leaseMillis(),
                r.startedAtMicros());
    }

    @Override
    public void deregister(String id) {
        NativeBridge.deregister(handle, id);
    }
}
