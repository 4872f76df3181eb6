package io.flexiq.internal.worker;

import io.flexiq.internal.NativeBridge;
import java.util.List;

/** A {@link WorkerStore} that passes every call on; tests override the calls they disturb. */
public class ForwardingStore implements WorkerStore {
    private final WorkerStore next;

    public ForwardingStore(WorkerStore next) {
        this.next = next;
    }

    @Override
    public int claim(String[] queues, String[] tasks, int limit, long leaseMillis, long token, ClaimBuffer out) {
        return next.claim(queues, tasks, limit, leaseMillis, token, out);
    }

    @Override
    public int recoverClaim(String[] queues, String[] tasks, long leaseMillis, long token, ClaimBuffer out) {
        return next.recoverClaim(queues, tasks, leaseMillis, token, out);
    }

    @Override
    public NativeBridge.Recorded complete(long[] ids, int[] attempts) {
        return next.complete(ids, attempts);
    }

    @Override
    public long[] extendLeases(long[] ids, int[] attempts, long leaseMillis) {
        return next.extendLeases(ids, attempts, leaseMillis);
    }

    @Override
    public NativeBridge.Failed fail(long id, int attempt, String error) {
        return next.fail(id, attempt, error);
    }

    @Override
    public long[] returnAttempts(long[] ids, int[] attempts) {
        return next.returnAttempts(ids, attempts);
    }

    @Override
    public List<NativeBridge.JobAttempt> attemptsNow(long[] ids) {
        return next.attemptsNow(ids);
    }

    @Override
    public List<NativeBridge.Rescued> rescueExpired() {
        return next.rescueExpired();
    }

    @Override
    public long workGeneration() {
        return next.workGeneration();
    }

    @Override
    public long awaitWork(long seen, long timeoutMillis) {
        return next.awaitWork(seen, timeoutMillis);
    }

    @Override
    public void wakeWorkers() {
        next.wakeWorkers();
    }

    @Override
    public byte[] checkpoint(long id, String name) {
        return next.checkpoint(id, name);
    }

    @Override
    public boolean saveCheckpoint(long id, int attempt, String name, byte[] value) {
        return next.saveCheckpoint(id, attempt, name, value);
    }

    @Override
    public NativeBridge.TransactionStatements transactionStatements() {
        return next.transactionStatements();
    }

    @Override
    public void heartbeat(Registration registration) {
        next.heartbeat(registration);
    }

    @Override
    public void deregister(String id) {
        next.deregister(id);
    }
}
