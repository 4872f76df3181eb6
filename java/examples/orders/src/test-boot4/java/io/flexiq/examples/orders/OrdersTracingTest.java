package io.flexiq.examples.orders;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flexiq.FlexiQ;
import io.flexiq.JobState;
import io.flexiq.test.FlexiQPostgres;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * With Spring Boot's tracing (Micrometer Tracing's OpenTelemetry bridge), a POST's trace
 * continues into its charge job's attempt, with no tracing code in the service.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"flexiq.worker.poll-interval=200ms", "management.tracing.sampling.probability=1.0"})
@FlexiQPostgres
@Import(OrdersTracingTest.Spans.class)
class OrdersTracingTest {
    /** Spans kept in memory, where Spring Boot exports them as to any exporter bean. */
    @TestConfiguration(proxyBeanMethods = false)
    static class Spans {
        @Bean
        InMemorySpanExporter spans() {
            return InMemorySpanExporter.create();
        }
    }

    @Value("${local.server.port}")
    int port;
    @Autowired
    FlexiQ flexiq;
    @Autowired
    InMemorySpanExporter spans;
    @Autowired
    SdkTracerProvider tracerProvider;

    @Test
    void aPostsTraceContinuesIntoItsChargeJob() throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/orders"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"id\":\"traced-1\",\"amountCents\":500}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(202, response.statusCode(), response.body());
        String job = new ObjectMapper().readTree(response.body()).get("chargeJobId").asText();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (flexiq.getJob(job).orElseThrow().state() != JobState.COMPLETED) {
            assertTrue(System.nanoTime() < end, "the charge job completes");
            Thread.sleep(20);
        }
        // The attempt's span ends as its handler returns, before the completion is recorded.
        tracerProvider.forceFlush().join(10, TimeUnit.SECONDS);
        List<SpanData> finished = spans.getFinishedSpanItems();
        SpanData post = finished.stream().filter(s -> s.getKind() == SpanKind.SERVER).findFirst().orElseThrow();
        SpanData enqueue = finished.stream().filter(s -> s.getKind() == SpanKind.PRODUCER).findFirst().orElseThrow();
        SpanData attempt = finished.stream().filter(s -> s.getKind() == SpanKind.CONSUMER).findFirst().orElseThrow();
        assertEquals(post.getTraceId(), enqueue.getTraceId(), "the enqueue is part of the POST's trace");
        assertEquals(post.getTraceId(), attempt.getTraceId(), "and so is the charge's attempt");
        assertEquals(enqueue.getSpanId(), attempt.getParentSpanId());
    }
}
