package io.flexiq;

import io.flexiq.opentelemetry.FlexiQTracing;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;

/**
 * A worker process with OpenTelemetry of its own, for {@link TracingTest}: runs charges, each
 * handler making a span of its own, until its standard input closes; then prints every span it
 * finished, one per line: "name traceId spanId parentSpanId".
 */
public final class TracedWorkerChild {
    private TracedWorkerChild() {}

    /** Arguments: database URL, schema. */
    public static void main(String[] args) throws Exception {
        InMemorySpanExporter exported = InMemorySpanExporter.create();
        try (OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exported))
                        .build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
                FlexiQ queue = FlexiQ.builder(args[0]).schema(args[1]).build()) {
            FlexiQTracing.enable(queue, otel);
            Worker worker = queue.worker().handle(EnqueueTest.CHARGE, (order, job) -> {
                // The handler's own work, as a payment client's instrumentation would trace it.
                otel.getTracer("payments").spanBuilder("charge card").startSpan().end();
            }).build().start();
            while (System.in.read() >= 0) {
                // The parent closes our input once the job has completed.
            }
            worker.close();
            for (SpanData s : exported.getFinishedSpanItems()) {
                System.out.println(s.getName().replace(' ', '_') + " " + s.getTraceId() + " " + s.getSpanId() + " "
                        + s.getParentSpanId());
            }
        }
    }
}
