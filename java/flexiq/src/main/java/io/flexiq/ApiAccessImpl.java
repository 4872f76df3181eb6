package io.flexiq;

import io.flexiq.internal.ApiAccess;
import java.time.Instant;

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
    public byte[] jsonForNativeCanonicalForm(CanonicalJsonSerializer serializer, Object payload) {
        return serializer.jsonForNativeCanonicalForm(payload);
    }
}
