package io.flexiq.opentelemetry;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flexiq.EnqueueOutcome;
import io.flexiq.EnqueueResult;
import io.flexiq.FlexiQ;
import io.flexiq.IdempotencyConflictException;
import io.flexiq.internal.ApiAccess;
import io.flexiq.internal.observability.Tracing;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Traces a client with OpenTelemetry (an optional dependency: the application brings
 * {@code io.opentelemetry:opentelemetry-api}). Each enqueue call is a {@link SpanKind#PRODUCER}
 * span ({@code send <queue>}) in the caller's current context, and its trace context, as the
 * application's propagator writes it, is stored with the call's jobs: outside the key and the
 * fingerprint, so a replay from another trace still replays (the job keeps the context it was
 * accepted in). Each attempt of a job runs in a {@link SpanKind#CONSUMER} span
 * ({@code process <queue>}), a child of the span that enqueued it and current while the handler
 * runs, so that the handler's own spans join the request's trace.
 *
 * <p>Attributes follow OpenTelemetry's messaging conventions where they fit
 * ({@code messaging.system} {@code flexiq}, {@code messaging.destination.name} the queue,
 * {@code messaging.message.id} the job id, {@code messaging.operation.type} {@code send} or
 * {@code process}, {@code messaging.batch.message_count}), with FlexiQ's own under
 * {@code flexiq.*}: the task, the enqueue's outcome ({@code accepted}, {@code replayed},
 * {@code conflict}, …, or per outcome counts for a batch), the preview of the key a call named
 * (never the key), and the attempt's number, attempt budget and result. A failed attempt records
 * its exception and an error status.
 *
 * <pre>{@code
 * FlexiQ client = FlexiQ.builder(url).build();
 * FlexiQTracing.enable(client, openTelemetry);
 * }</pre>
 */
public final class FlexiQTracing {
    private static final String SYSTEM = "flexiq";
    private static final AttributeKey<String> MESSAGING_SYSTEM = AttributeKey.stringKey("messaging.system");
    private static final AttributeKey<String> DESTINATION = AttributeKey.stringKey("messaging.destination.name");
    private static final AttributeKey<String> OPERATION_TYPE = AttributeKey.stringKey("messaging.operation.type");
    private static final AttributeKey<String> OPERATION_NAME = AttributeKey.stringKey("messaging.operation.name");
    private static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
    private static final AttributeKey<Long> BATCH_COUNT = AttributeKey.longKey("messaging.batch.message_count");
    private static final AttributeKey<String> TASK = AttributeKey.stringKey("flexiq.task");
    private static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("flexiq.enqueue.outcome");
    private static final AttributeKey<String> KEY_PREVIEW = AttributeKey.stringKey("flexiq.key_preview");
    private static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("flexiq.attempt");
    private static final AttributeKey<Long> MAX_ATTEMPTS = AttributeKey.longKey("flexiq.max_attempts");
    private static final AttributeKey<String> RESULT = AttributeKey.stringKey("flexiq.attempt.result");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, String>> CARRIER = new TypeReference<>() {};
    private static final TextMapGetter<Map<String, String>> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private FlexiQTracing() {}

    /**
     * Traces {@code client}'s enqueue calls and its workers' attempts with
     * {@code openTelemetry}'s tracer and propagator, from the next call and attempt on.
     */
    public static void enable(FlexiQ client, OpenTelemetry openTelemetry) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(openTelemetry, "openTelemetry");
        ApiAccess.get().listeners(client).trace(new OpenTelemetryTracing(openTelemetry));
    }

    /** Stops tracing {@code client}'s calls and attempts. */
    public static void disable(FlexiQ client) {
        ApiAccess.get().listeners(Objects.requireNonNull(client, "client")).trace(null);
    }

    /** The client's tracing on OpenTelemetry. */
    private static final class OpenTelemetryTracing implements Tracing {
        private final Tracer tracer;
        private final TextMapPropagator propagator;

        OpenTelemetryTracing(OpenTelemetry openTelemetry) {
            this.tracer = openTelemetry.getTracer("io.flexiq");
            this.propagator = openTelemetry.getPropagators().getTextMapPropagator();
        }

        @Override
        public EnqueueSpan enqueue(String task, String queue, int entries) {
            SpanBuilder builder = messaging(tracer.spanBuilder("send " + queue), queue, "send")
                    .setSpanKind(SpanKind.PRODUCER)
                    .setAttribute(TASK, task);
            if (entries > 1) {
                builder.setAttribute(BATCH_COUNT, (long) entries);
            }
            Span span = builder.startSpan();
            return new EnqueueSpan() {
                private String context;

                @Override
                public String context() {
                    if (context == null) {
                        Map<String, String> carrier = new LinkedHashMap<>();
                        propagator.inject(Context.current().with(span), carrier, Map::put);
                        context = carrier.isEmpty() ? "" : json(carrier);
                    }
                    return context.isEmpty() ? null : context;
                }

                @Override
                public void end(List<EnqueueResult> results, List<String> keyPreviews) {
                    if (results.size() == 1) {
                        span.setAttribute(MESSAGE_ID, results.get(0).jobId());
                        span.setAttribute(OUTCOME, name(results.get(0).outcome()));
                        if (keyPreviews.get(0) != null) {
                            span.setAttribute(KEY_PREVIEW, keyPreviews.get(0));
                        }
                    } else {
                        Map<EnqueueOutcome, Long> counts = new EnumMap<>(EnqueueOutcome.class);
                        results.forEach(r -> counts.merge(r.outcome(), 1L, Long::sum));
                        counts.forEach((outcome, n) -> span.setAttribute(
                                AttributeKey.longKey("flexiq.enqueue." + name(outcome)), n));
                    }
                    span.end();
                }

                @Override
                public void fail(Throwable failure) {
                    if (failure instanceof IdempotencyConflictException conflict) {
                        span.setAttribute(OUTCOME, "conflict");
                        if (conflict.keyPreview() != null) {
                            span.setAttribute(KEY_PREVIEW, conflict.keyPreview());
                        }
                        conflict.existingJobId().ifPresent(id -> span.setAttribute(MESSAGE_ID, id));
                    }
                    failed(span, failure);
                    span.end();
                }
            };
        }

        @Override
        public AttemptSpan attempt(String task, String queue, long jobId, int attempt, int maxAttempts,
                String traceContext) {
            Span span = messaging(tracer.spanBuilder("process " + queue), queue, "process")
                    .setSpanKind(SpanKind.CONSUMER)
                    .setParent(enqueued(traceContext))
                    .setAttribute(MESSAGE_ID, Long.toString(jobId))
                    .setAttribute(TASK, task)
                    .setAttribute(ATTEMPT, (long) attempt)
                    .setAttribute(MAX_ATTEMPTS, (long) maxAttempts)
                    .startSpan();
            Scope scope = span.makeCurrent();
            return failure -> {
                try {
                    if (failure == null) {
                        span.setAttribute(RESULT, "succeeded");
                    } else {
                        span.setAttribute(RESULT, "failed");
                        failed(span, failure);
                    }
                } finally {
                    scope.close();
                    span.end();
                }
            };
        }

        /** The context a job's enqueue stored; a new trace without one, or where it cannot be read. */
        private Context enqueued(String traceContext) {
            if (traceContext == null) {
                return Context.root();
            }
            try {
                return propagator.extract(Context.root(), JSON.readValue(traceContext, CARRIER), GETTER);
            } catch (JsonProcessingException e) {
                return Context.root();
            }
        }
    }

    private static SpanBuilder messaging(SpanBuilder builder, String queue, String operation) {
        return builder.setAttribute(MESSAGING_SYSTEM, SYSTEM)
                .setAttribute(DESTINATION, queue)
                .setAttribute(OPERATION_TYPE, operation)
                .setAttribute(OPERATION_NAME, operation);
    }

    private static void failed(Span span, Throwable failure) {
        span.recordException(failure);
        span.setStatus(StatusCode.ERROR, failure.getClass().getSimpleName());
    }

    private static String name(EnqueueOutcome outcome) {
        return outcome.name().toLowerCase(Locale.ROOT);
    }

    private static String json(Map<String, String> carrier) {
        try {
            return JSON.writeValueAsString(carrier);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a trace context of texts is always JSON", e);
        }
    }
}
