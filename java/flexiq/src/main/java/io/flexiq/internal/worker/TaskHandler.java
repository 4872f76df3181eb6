package io.flexiq.internal.worker;

import io.flexiq.JobHandler;
import io.flexiq.PayloadSerializer;
import io.flexiq.Task;
import io.flexiq.internal.ApiAccess;
import io.flexiq.internal.NativeBridge;
import io.flexiq.internal.enqueue.StoredPayloads;
import java.sql.Connection;

/** A task with its handler, which reads the payload as the task's type. */
public record TaskHandler<T>(Task<T> task, JobHandler<T> handler) {
    private static final ApiAccess API = ApiAccess.get();

    void run(StoredPayloads stored, PayloadSerializer serializer, WorkerStore store, HeldAttempt held)
            throws Exception {
        byte[] serialized = stored.decode(held.id, task.name(), held.payload, held.payloadCodec);
        T payload = serializer.deserialize(serialized, task.payloadType());
        AttemptStore attempt = new AttemptStore() {
            @Override
            public byte[] load(String name) {
                return store.checkpoint(held.id, name);
            }

            @Override
            public boolean save(String name, byte[] value) {
                return store.saveCheckpoint(held.id, held.attempt, name, value);
            }

            @Override
            public boolean saveIn(Connection connection, String name, byte[] value) {
                NativeBridge.TransactionStatements sql = store.transactionStatements();
                if (value.length > sql.maxCheckpointBytes()) {
                    throw new IllegalArgumentException("checkpoint " + name + " is " + value.length
                            + " bytes once serialized, more than the " + sql.maxCheckpointBytes() + " allowed");
                }
                return ApplicationTransaction.saveCheckpoint(connection, sql.saveCheckpoint(), held.id, held.attempt,
                        name, value);
            }

            @Override
            public void completesInTransaction() {
                held.completesInTransaction();
            }

            @Override
            public boolean completeIn(Connection connection) {
                // Before the statement locks the job's row: the lease keeper leaves the attempt
                // alone from here on, rather than wait on that lock until the application commits.
                held.completionRunsInTransaction();
                return ApplicationTransaction.complete(connection, store.transactionStatements().complete(), held.id,
                        held.attempt);
            }
        };
        handler.handle(payload, API.jobContext(attempt, serializer, held.id, held.attempt, held.maxAttempts,
                held.queue, task.name()));
    }
}
