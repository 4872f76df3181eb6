package io.flexiq.bench;

import io.flexiq.FlexiQ;
import io.flexiq.opentelemetry.FlexiQTracing;
import io.flexiq.test.PostgresServer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.Locale;

/**
 * What tracing costs an enqueue: the Java API's enqueues per second with tracing off and on
 * ({@link FlexiQTracing} on OpenTelemetry's SDK, every span sampled and batched for export, the
 * export itself discarded), alternating over rounds on one durable PostgreSQL; medians compared.
 * Workloads W1 (keyed, fresh key) and W3 (unkeyed) of {@link EnqueueBench}, at 1 and 4 threads.
 *
 * <p>Arguments (optional): seconds per measurement (default 3), rounds (default 5).
 */
public final class TracingBench {
    private TracingBench() {}

    /** Runs the benchmark and prints its figures. */
    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        try (PostgresServer pg = PostgresServer.start();
                FlexiQ queue = FlexiQ.builder(pg.url()).schema(EnqueueBench.SCHEMA).migrate(true).build();
                OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                        .setTracerProvider(SdkTracerProvider.builder()
                                .addSpanProcessor(BatchSpanProcessor.builder(new Discarding()).build()).build())
                        .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                        .build()) {
            System.out.printf(Locale.ROOT, "FlexiQ tracing benchmark: %d cores, %d rounds of %.0f s, medians%n%n",
                    Runtime.getRuntime().availableProcessors(), rounds, seconds);
            System.out.printf(Locale.ROOT, "%-24s %8s %14s %14s %7s%n", "workload", "threads", "off jobs/s",
                    "on jobs/s", "on/off");
            for (EnqueueBench.Workload w : new EnqueueBench.Workload[] {
                    EnqueueBench.Workload.W1_FRESH, EnqueueBench.Workload.W3_UNKEYED}) {
                for (int threads : new int[] {1, 4}) {
                    double[] off = new double[rounds];
                    double[] on = new double[rounds];
                    for (int r = 0; r < rounds; r++) {
                        FlexiQTracing.disable(queue);
                        off[r] = EnqueueBench.run(threads, seconds, () -> EnqueueBench.apiOp(queue, w));
                        FlexiQTracing.enable(queue, otel);
                        on[r] = EnqueueBench.run(threads, seconds, () -> EnqueueBench.apiOp(queue, w));
                    }
                    FlexiQTracing.disable(queue);
                    System.out.printf(Locale.ROOT, "%-24s %8d %14.0f %14.0f %7.2f   load %s%n", w.label, threads,
                            WorkerBench.median(off), WorkerBench.median(on),
                            WorkerBench.median(on) / WorkerBench.median(off), EnqueueBench.loadAverages());
                }
            }
        }
    }

    /** Takes every span and keeps none: the cost measured is FlexiQ's and the SDK's, not an exporter's. */
    private static final class Discarding implements SpanExporter {
        @Override
        public CompletableResultCode export(Collection<SpanData> spans) {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode flush() {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode shutdown() {
            return CompletableResultCode.ofSuccess();
        }
    }
}
