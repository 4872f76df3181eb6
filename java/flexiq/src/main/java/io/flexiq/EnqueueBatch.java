package io.flexiq;

import io.flexiq.internal.NativeBridge;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Entries on their way to the native core, sent in one call. Each entry's key is resolved here:
 * the call receives the key the options name, or the request to derive it from the payload,
 * never the inputs it came from. With {@link CanonicalJsonSerializer} the payload crosses as
 * Jackson's JSON and the core puts it in canonical form before deriving the key, so that an
 * enqueue crosses JNI once.
 */
final class EnqueueBatch {
    private final int size;
    private final NativeBridge.Enqueue call;
    /** The client's retention for explicit keys, or null. */
    private final Duration explicitKeyRetention;

    EnqueueBatch(int size, Duration explicitKeyRetention) {
        this.size = size;
        this.explicitKeyRetention = explicitKeyRetention;
        this.call = new NativeBridge.Enqueue(size);
    }

    /** Serializes the payload, resolves the key and its retention, and appends the entry. */
    <T> void add(Task<T> task, T payload, EnqueueOptions options, PayloadSerializer serializer) {
        byte[] json = serializer instanceof CanonicalJsonSerializer c ? c.jsonForNativeCanonicalForm(payload) : null;
        byte[] bytes = json != null ? json : serializer.serialize(payload);
        String key = DedupKeys.explicitOrNull(options);
        boolean derive = key == null && DedupKeys.derives(task, options);
        Duration retention = DedupKeys.retentionOrNull(options, derive, explicitKeyRetention);
        call.add(task.name(), bytes, json != null, key, derive, retention, options);
    }

    /** Sends the batch in one native call (one statement); results in input order. */
    List<EnqueueResult> send(long client) {
        return results(call.send(client));
    }

    /**
     * Runs the batch's statement on the application's connection, in its transaction; results
     * in input order. An empty batch touches neither the connection nor the native core.
     */
    List<EnqueueResult> sendOn(Connection connection, long client) {
        return size == 0 ? List.of() : results(ConnectionEnqueue.run(connection, client, call));
    }

    private List<EnqueueResult> results(NativeBridge.Enqueued out) {
        List<EnqueueResult> results = new ArrayList<>(size);
        for (int i = 0; i < out.jobIds().length; i++) {
            results.add(new EnqueueResult(Long.toString(out.jobIds()[i]), out.outcomes()[i], null));
        }
        return results;
    }
}
