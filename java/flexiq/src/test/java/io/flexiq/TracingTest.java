package io.flexiq;

import static io.flexiq.WorkerTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.flexiq.opentelemetry.FlexiQTracing;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
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
    void aReplayFromAnotherTraceReplaysAddsNoExecutionAndTheJobKeepsTheTraceItWasAcceptedIn() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            FlexiQTracing.enable(queue, otel);
            EnqueueOptions keyed = EnqueueOptions.builder().idempotencyKey("order-2").build();
            EnqueueTest.Order order = new EnqueueTest.Order(2, 100);
            String[] first = new String[1];
            String[] again = new String[1];
            SpanContext[] replayed = new SpanContext[1];
            SpanContext accepted = inRequest("first", () -> first[0] = queue.enqueue(CHARGE, order, keyed));
            WorkerTest.running(queue.worker().handle(CHARGE, (o, job) -> { }), () -> {
                await("the job's attempt", () -> attempts(first[0]) == 1);
                replayed[0] = inRequest("retry", () -> again[0] = queue.enqueue(CHARGE, order, keyed));
                // Ran after the replay: had the replay made work, it would have run by now too.
                String marker = queue.enqueue(CHARGE, new EnqueueTest.Order(9, 1));
                await("a later job's attempt", () -> attempts(marker) == 1);
            });
            assertEquals(first[0], again[0]);
            assertEquals(1, attempts(first[0]), "the replay adds no execution");

            List<SpanData> enqueues = spans(SpanKind.PRODUCER);
            assertEquals(List.of("accepted", "replayed", "accepted"),
                    enqueues.stream().map(s -> text(s, "flexiq.enqueue.outcome")).toList());
            assertEquals(replayed[0].getTraceId(), enqueues.get(1).getTraceId());
            SpanData attempt = spans(SpanKind.CONSUMER).stream()
                    .filter(s -> first[0].equals(text(s, "messaging.message.id"))).findFirst().orElseThrow();
            assertEquals(accepted.getTraceId(), attempt.getTraceId());
            assertEquals(enqueues.get(0).getSpanId(), attempt.getParentSpanId());
        }
    }

    /** The attempt spans of job {@code id} finished so far. */
    private long attempts(String id) {
        return spans(SpanKind.CONSUMER).stream().filter(s -> id.equals(text(s, "messaging.message.id"))).count();
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

    @Test
    void oneTraceRunsFromAnHttpRequestThroughTheEnqueueToTheHandlerInAnotherJvm() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        try (FlexiQ queue = TestDatabase.client()) {
            FlexiQTracing.enable(queue, otel);
            // The service: continues the caller's trace from its traceparent header, as an
            // instrumented web framework does, and enqueues in that request's span.
            server.createContext("/orders", exchange -> {
                Context caller = otel.getPropagators().getTextMapPropagator().extract(Context.root(), exchange,
                        new TextMapGetter<HttpExchange>() {
                            @Override
                            public Iterable<String> keys(HttpExchange e) {
                                return e.getRequestHeaders().keySet();
                            }

                            @Override
                            public String get(HttpExchange e, String key) {
                                return e.getRequestHeaders().getFirst(key);
                            }
                        });
                Span request = otel.getTracer("web").spanBuilder("POST /orders").setParent(caller)
                        .setSpanKind(SpanKind.SERVER).startSpan();
                Scope scope = request.makeCurrent();
                String id;
                try {
                    id = queue.enqueue(CHARGE, new EnqueueTest.Order(8, 100));
                } finally {
                    scope.close();
                    request.end();
                }
                byte[] body = id.getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
                exchange.close();
            });
            server.start();
            // The caller: an HTTP client whose span's context goes out in the traceparent header.
            Span client = otel.getTracer("client").spanBuilder("order").setSpanKind(SpanKind.CLIENT).startSpan();
            HttpRequest.Builder post = HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/orders"))
                    .POST(HttpRequest.BodyPublishers.noBody());
            otel.getPropagators().getTextMapPropagator().inject(Context.root().with(client), post,
                    HttpRequest.Builder::header);
            String id = HttpClient.newHttpClient().send(post.build(), HttpResponse.BodyHandlers.ofString()).body();
            client.end();

            Process worker = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), TracedWorkerChild.class.getName(),
                    TestDatabase.url(), queue.schema())
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            await("the other JVM to complete the job", () -> WorkerTest.job(queue, id).state() == JobState.COMPLETED);
            worker.getOutputStream().close();
            List<String[]> theirs = new String(worker.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines()
                    .map(line -> line.split(" ")).toList();
            assertTrue(worker.waitFor(60, TimeUnit.SECONDS));

            String trace = client.getSpanContext().getTraceId();
            SpanData request = exported.getFinishedSpanItems().stream()
                    .filter(s -> s.getName().equals("POST /orders")).findFirst().orElseThrow();
            SpanData enqueue = spans(SpanKind.PRODUCER).get(0);
            assertEquals(trace, request.getTraceId());
            assertEquals(request.getSpanId(), enqueue.getParentSpanId());
            String[] attempt = theirs.stream().filter(f -> f[0].equals("process_default")).findFirst().orElseThrow();
            String[] handler = theirs.stream().filter(f -> f[0].equals("charge_card")).findFirst().orElseThrow();
            assertEquals(trace, attempt[1], "the other JVM's attempt is in the request's trace");
            assertEquals(enqueue.getSpanId(), attempt[3], "a child of the enqueue");
            assertEquals(trace, handler[1]);
            assertEquals(attempt[2], handler[3], "the handler's own span is a child of the attempt's");
        } finally {
            server.stop(0);
        }
    }
}
