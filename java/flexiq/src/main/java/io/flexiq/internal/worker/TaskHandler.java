package io.flexiq.internal.worker;

import io.flexiq.JobHandler;
import io.flexiq.PayloadSerializer;
import io.flexiq.Task;
import io.flexiq.internal.ApiAccess;
import io.flexiq.internal.enqueue.StoredPayloads;

/** A task with its handler, which reads the payload as the task's type. */
public record TaskHandler<T>(Task<T> task, JobHandler<T> handler) {
    private static final ApiAccess API = ApiAccess.get();

    void run(StoredPayloads stored, PayloadSerializer serializer, WorkerStore store, HeldAttempt held)
            throws Exception {
        byte[] serialized = stored.decode(held.id, task.name(), held.payload, held.payloadCodec);
        T payload = serializer.deserialize(serialized, task.payloadType());
        Checkpoints checkpoints = new Checkpoints() {
            @Override
            public byte[] load(String name) {
                return store.checkpoint(held.id, name);
            }

            @Override
            public boolean save(String name, byte[] value) {
                return store.saveCheckpoint(held.id, held.attempt, name, value);
            }
        };
        handler.handle(payload, API.jobContext(checkpoints, serializer, held.id, held.attempt, held.maxAttempts,
                held.queue, task.name()));
    }
}
