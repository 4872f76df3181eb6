package io.flexiq;

import io.flexiq.internal.ApiAccess;
import io.flexiq.internal.observability.Listeners;
import io.flexiq.internal.worker.AttemptStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The package-private members of this package's types that the engine ({@code io.flexiq.internal.…})
 * uses, handed to it through {@link ApiAccess}: each method calls the one member it names. It
 * registers itself when its class is initialized, which {@link ApiAccess#get()} brings about.
 */
final class ApiAccessImpl extends ApiAccess {
    static {
        ApiAccess.register(new ApiAccessImpl());
    }

    private ApiAccessImpl() {}

    @Override
    public EnqueueResult enqueueResult(String jobId, EnqueueOutcome outcome, NonReplaceableReason reason) {
        return new EnqueueResult(jobId, outcome, reason);
    }

    @Override
    public EnqueueEvent enqueueEvent(String task, String queue, EnqueueOutcome outcome, String jobId,
            String keyPreview, String keyDigest, Instant at) {
        return new EnqueueEvent(task, queue, outcome, jobId, keyPreview, keyDigest, at);
    }

    @Override
    public JobEvent jobEvent(JobEvent.Kind kind, String jobId, String task, String queue, int attempt,
            int maxAttempts, String error, Duration retryDelay, Duration handlerDuration, Duration startLatency) {
        return new JobEvent(kind, jobId, task, queue, attempt, maxAttempts, error, retryDelay, handlerDuration,
                startLatency);
    }

    @Override
    public JobContext jobContext(AttemptStore store, PayloadSerializer serializer, long jobId, int attempt,
            int maxAttempts, String queue, String task) {
        return new JobContext(store, serializer, jobId, attempt, maxAttempts, queue, task);
    }

    @Override
    public JobInfo jobInfo(String id, String queue, String task, JobState state, int priority, int attempt,
            int maxAttempts, List<String> tags, Instant runAt, Instant createdAt, Instant startedAt,
            Instant finishedAt, String keyScope, String keyPreview, String keyDigest, boolean keyHeld,
            String lastError, String payloadCodec) {
        return new JobInfo(id, queue, task, state, priority, attempt, maxAttempts, tags, runAt, createdAt, startedAt,
                finishedAt, keyScope, keyPreview, keyDigest, keyHeld, lastError, payloadCodec);
    }

    @Override
    public byte[] jsonForNativeCanonicalForm(CanonicalJsonSerializer serializer, Object payload) {
        return serializer.jsonForNativeCanonicalForm(payload);
    }

    @Override
    public Listeners listeners(FlexiQ client) {
        return client.listeners();
    }
}
