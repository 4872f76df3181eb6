package io.flexiq;

import static io.flexiq.WorkerTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.opentelemetry.FlexiQTracing;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A request's trace continued into the jobs it enqueued, with OpenTelemetry's SDK exporting to memory. */
class TracingTest {
    static final Task<EnqueueTest.Order> CHARGE = EnqueueTest.CHARGE;

    private final InMemorySpanExporter exported = InMemorySpanExporter.create();
    private final OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exported)).build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
            .build();

    @AfterEach
    void close() {
        otel.close();
    }

    /** Runs {@code call} in a span of the application's own, as a request handler would; returns that span's context. */
    private <T> SpanContext inRequest(String name, Supplier<T> call) {
        Span request = otel.getTracer("test").spanBuilder(name).startSpan();
        Scope scope = request.makeCurrent();
        try {
            call.get();
        } finally {
            scope.close();
            request.end();
        }
        return request.getSpanContext();
    }

    private List<SpanData> spans(SpanKind kind) {
        return exported.getFinishedSpanItems().stream().filter(s -> s.getKind() == kind).toList();
    }

    private static String text(SpanData span, String key) {
        return span.getAttributes().get(AttributeKey.stringKey(key));
    }

    private static Long number(SpanData span, String key) {
        return span.getAttributes().get(AttributeKey.longKey(key));
    }

    @Test
    void theAttemptContinuesTheTraceOfTheRequestThatEnqueuedIt() throws Exception {
        List<SpanContext> seenByHandler = new CopyOnWriteArrayList<>();
        try (FlexiQ queue = TestDatabase.client()) {
            FlexiQTracing.enable(queue, otel);
            String[] id = new String[1];
            SpanContext request = inRequest("POST /orders", () -> id[0] = queue.enqueue(CHARGE,
                    new EnqueueTest.Order(1, 100), EnqueueOptions.builder().idempotencyKey("order-1-secret").build()));
            WorkerTest.running(queue.worker().handle(CHARGE, (order, job) -> seenByHandler.add(Span.current()
                    .getSpanContext())), () -> await("the attempt's span", () -> !spans(SpanKind.CONSUMER).isEmpty()));

            SpanData enqueue = spans(SpanKind.PRODUCER).get(0);
            assertEquals("send default", enqueue.getName());
            assertEquals(request.getSpanId(), enqueue.getParentSpanId(), "the enqueue is part of the request");
            assertEquals(request.getTraceId(), enqueue.getTraceId());
            assertEquals("flexiq", text(enqueue, "messaging.system"));
            assertEquals("default", text(enqueue, "messaging.destination.name"));
            assertEquals("send", text(enqueue, "messaging.operation.type"));
            assertEquals(id[0], text(enqueue, "messaging.message.id"));
            assertEquals(CHARGE.name(), text(enqueue, "flexiq.task"));
            assertEquals("accepted", text(enqueue, "flexiq.enqueue.outcome"));
            String preview = text(enqueue, "flexiq.key_preview");
            assertTrue(preview != null && !preview.contains("secret"), "a preview, never the key: " + preview);
            exported.getFinishedSpanItems().forEach(s -> s.getAttributes().forEach((k, v) ->
                    assertFalse(String.valueOf(v).contains("order-1-secret"), k + " holds the raw key")));

            SpanData attempt = spans(SpanKind.CONSUMER).get(0);
            assertEquals("process default", attempt.getName());
            assertEquals(request.getTraceId(), attempt.getTraceId(), "one trace from the request to the handler");
            assertEquals(enqueue.getSpanId(), attempt.getParentSpanId());
            assertEquals(id[0], text(attempt, "messaging.message.id"));
            assertEquals("process", text(attempt, "messaging.operation.type"));
            assertEquals(1L, number(attempt, "flexiq.attempt"));
            assertEquals("succeeded", text(attempt, "flexiq.attempt.result"));
            assertEquals(List.of(attempt.getSpanContext()), seenByHandler, "the handler runs in the attempt's span");
        }
    }

    @Test
    void aReplayFromAnotherTraceReplaysAndTheJobKeepsTheTraceItWasAcceptedIn() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            FlexiQTracing.enable(queue, otel);
            EnqueueOptions keyed = EnqueueOptions.builder().idempotencyKey("order-2").build();
            EnqueueTest.Order order = new EnqueueTest.Order(2, 100);
            String[] first = new String[1];
            String[] again = new String[1];
            SpanContext accepted = inRequest("first", () -> first[0] = queue.enqueue(CHARGE, order, keyed));
            SpanContext replayed = inRequest("retry", () -> again[0] = queue.enqueue(CHARGE, order, keyed));
            assertEquals(first[0], again[0]);
            WorkerTest.running(queue.worker().handle(CHARGE, (o, job) -> { }),
                    () -> await("the attempt's span", () -> !spans(SpanKind.CONSUMER).isEmpty()));

            List<SpanData> enqueues = spans(SpanKind.PRODUCER);
            assertEquals(List.of("accepted", "replayed"),
                    enqueues.stream().map(s -> text(s, "flexiq.enqueue.outcome")).toList());
            assertEquals(replayed.getTraceId(), enqueues.get(1).getTraceId());
            SpanData attempt = spans(SpanKind.CONSUMER).get(0);
            assertEquals(accepted.getTraceId(), attempt.getTraceId());
            assertEquals(enqueues.get(0).getSpanId(), attempt.getParentSpanId());
        }
    }

    @Test
    void aFailedAttemptRecordsItsErrorAndABatchCountsItsOutcomes() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            FlexiQTracing.enable(queue, otel);
            inRequest("bulk", () -> queue.enqueueMany(CHARGE,
                    List.of(new EnqueueTest.Order(3, 1), new EnqueueTest.Order(4, 1), new EnqueueTest.Order(5, 1)),
                    EnqueueOptions.builder().maxAttempts(1).build()));
            WorkerTest.running(queue.worker().handle(CHARGE, (o, job) -> {
                throw new IllegalStateException("card declined");
            }), () -> await("three attempts' spans", () -> spans(SpanKind.CONSUMER).size() == 3));

            SpanData batch = spans(SpanKind.PRODUCER).get(0);
            assertEquals(3L, number(batch, "messaging.batch.message_count"));
            assertEquals(3L, number(batch, "flexiq.enqueue.accepted"));
            for (SpanData attempt : spans(SpanKind.CONSUMER)) {
                assertEquals(batch.getSpanId(), attempt.getParentSpanId());
                assertEquals(StatusCode.ERROR, attempt.getStatus().getStatusCode());
                assertEquals("failed", text(attempt, "flexiq.attempt.result"));
                assertEquals("card declined", attempt.getEvents().get(0).getAttributes()
                        .get(AttributeKey.stringKey("exception.message")));
            }
        }
    }

    @Test
    void aConflictEndsItsSpanAsAConflictAndWithoutTracingNothingIsStored() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            EnqueueOptions keyed = EnqueueOptions.builder().idempotencyKey("order-6").build();
            String untraced = queue.enqueue(CHARGE, new EnqueueTest.Order(6, 100), keyed);
            assertEquals(0, TestDatabase.scalar("SELECT count(*) FROM " + queue.schema()
                    + ".jobs WHERE trace_context IS NOT NULL"), "tracing off: no context is stored");
            FlexiQTracing.enable(queue, otel);
            assertThrows(IdempotencyConflictException.class,
                    () -> queue.enqueue(CHARGE, new EnqueueTest.Order(6, 999), keyed));
            SpanData conflict = spans(SpanKind.PRODUCER).get(0);
            assertEquals("conflict", text(conflict, "flexiq.enqueue.outcome"));
            assertEquals(untraced, text(conflict, "messaging.message.id"));
            assertEquals(StatusCode.ERROR, conflict.getStatus().getStatusCode());
            FlexiQTracing.disable(queue);
            queue.enqueue(CHARGE, new EnqueueTest.Order(7, 100), EnqueueOptions.defaults());
            assertEquals(1, spans(SpanKind.PRODUCER).size(), "tracing off again");
        }
    }
}
