package io.flexiq.internal.observability;

import io.flexiq.EnqueueResult;
import java.util.List;

/**
 * What a client traces once tracing is on ({@code io.flexiq.opentelemetry.FlexiQTracing}): each
 * enqueue call, whose trace context is stored with its jobs, and each attempt of a job, in the
 * context its enqueue stored.
 */
public interface Tracing {
    /**
     * Begins the span of an enqueue call of {@code entries} entries, the first of task
     * {@code task} to queue {@code queue}.
     */
    EnqueueSpan enqueue(String task, String queue, int entries);

    /**
     * Begins the span of attempt {@code attempt} of a job, in {@code traceContext} (as its
     * enqueue stored it, or null), current on the calling thread until it ends there.
     */
    AttemptSpan attempt(String task, String queue, long jobId, int attempt, int maxAttempts, String traceContext);

    /** An enqueue call's span. */
    interface EnqueueSpan {
        /** The trace context to store with the call's jobs: carrier entries as a JSON object, or null. */
        String context();

        /** Ends it with each entry's result and the preview of the key it named, or null (never the key). */
        void end(List<EnqueueResult> results, List<String> keyPreviews);

        /** Ends it with the call's failure. */
        void fail(Throwable failure);
    }

    /** An attempt's span. */
    interface AttemptSpan {
        /** Ends it on the thread that began it: the handler returned if {@code failure} is null. */
        void end(Throwable failure);
    }
}
