package io.flexiq.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.IdempotencyConflictException;
import io.flexiq.RetryPolicy;
import io.flexiq.Task;
import io.flexiq.Worker;
import io.flexiq.test.FlexiQExtension;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The meters of a client and its worker, fed by a real PostgreSQL. */
@ExtendWith(FlexiQExtension.class)
class FlexiQMetricsTest {
    /** A payload. */
    public record Charge(int order) {}

    static final Task<Charge> CHARGE = Task.of("metered_charge", Charge.class);

    @Test
    void countsEnqueuesAttemptsDeadLettersAndTimesHandlersAndStarts(FlexiQ queue) throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        try (FlexiQMetrics metrics = new FlexiQMetrics(queue, Duration.ofSeconds(1))) {
            metrics.bindTo(registry);
            EnqueueOptions keyed = EnqueueOptions.builder().idempotencyKey("order-1").build();
            queue.enqueue(CHARGE, new Charge(1), keyed);
            queue.enqueue(CHARGE, new Charge(1), keyed);
            assertThrows(IdempotencyConflictException.class, () -> queue.enqueue(CHARGE, new Charge(2), keyed));
            queue.enqueue(CHARGE, new Charge(-1), EnqueueOptions.builder().maxAttempts(2)
                    .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(10))).build());
            for (int i = 0; i < 3; i++) {
                queue.enqueue(CHARGE, new Charge(100 + i), EnqueueOptions.builder().queue("later")
                        .delay(Duration.ofHours(1)).build());
            }
            await(() -> gauge(registry, "later", "scheduled") == 3 && gauge(registry, "default", "available") == 2);
            assertEquals(0, gauge(registry, "later", "dead"));

            Worker worker = queue.worker().handle(CHARGE, (c, job) -> {
                if (c.order() < 0) {
                    throw new IllegalStateException("declined");
                }
            }).build().start();
            await(() -> counter(registry, "flexiq.dead.letters", "task", "metered_charge") == 1
                    && counter(registry, "flexiq.attempts", "result", "completed") == 1);
            worker.close();
            assertEquals(5, counter(registry, "flexiq.enqueues", "outcome", "accepted"));
            assertEquals(1, counter(registry, "flexiq.enqueues", "outcome", "replayed"));
            assertEquals(1, counter(registry, "flexiq.enqueues", "outcome", "conflict"));
            assertEquals(2, counter(registry, "flexiq.attempts", "result", "failed"));
            assertEquals(3, registry.find("flexiq.handler.duration").timers().stream().mapToLong(Timer::count).sum());
            assertEquals(2, timer(registry, "flexiq.handler.duration", "failed").count());
            Timer latency = registry.find("flexiq.start.latency").tags("task", "metered_charge", "queue", "default")
                    .timer();
            assertEquals(3, latency.count());
            assertTrue(latency.max(TimeUnit.NANOSECONDS) > 0);
            await(() -> gauge(registry, "default", "dead") == 1 && gauge(registry, "default", "available") == 0);
        }
    }

    @Test
    void aQueueWhoseJobsLeaveBetweenReadingsStillHasItsSeriesAtZero(FlexiQ queue) throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        try (FlexiQMetrics metrics = new FlexiQMetrics(queue, Duration.ofSeconds(1))) {
            metrics.bindTo(registry);
            String id = queue.enqueue(CHARGE, new Charge(7), EnqueueOptions.builder().queue("brief").build());
            queue.purge(id);
            await(() -> gauge(registry, "brief", "available") == 0 && gauge(registry, "brief", "running") == 0);
        }
    }

    @Test
    void theGaugeHoldsTheCountsAndTheGivenQueuesAsSoonAsItIsBound(FlexiQ queue) {
        queue.enqueue(CHARGE, new Charge(8), EnqueueOptions.builder().queue("waiting").delay(Duration.ofHours(1)).build());
        MeterRegistry registry = new SimpleMeterRegistry();
        try (FlexiQMetrics metrics = new FlexiQMetrics(queue, Duration.ofHours(1), List.of("idle"))) {
            metrics.bindTo(registry);
            // No waiting: read while binding, not at the first refresh, an hour later.
            assertEquals(1.0, gauge(registry, "waiting", "scheduled"));
            assertEquals(0.0, gauge(registry, "waiting", "available"));
            assertEquals(0.0, gauge(registry, "idle", "available"));
        }
    }

    @Test
    void aQueueFirstNamedByAnEnqueueIsReadWithoutWaitingForTheRefresh(FlexiQ queue) throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        try (FlexiQMetrics metrics = new FlexiQMetrics(queue, Duration.ofHours(1))) {
            metrics.bindTo(registry);
            assertEquals(-1.0, gauge(registry, "fresh", "available"), "no series before the queue is named");
            queue.enqueue(CHARGE, new Charge(9), EnqueueOptions.builder().queue("fresh").build());
            await(() -> gauge(registry, "fresh", "available") == 1);
        }
    }

    @Test
    void refusesARefreshUnderASecond(FlexiQ queue) {
        assertThrows(IllegalArgumentException.class, () -> new FlexiQMetrics(queue, Duration.ofMillis(10)));
    }

    private static double gauge(MeterRegistry registry, String queue, String state) {
        Gauge g = registry.find("flexiq.jobs").tags("queue", queue, "state", state).gauge();
        return g == null ? -1 : g.value();
    }

    private static double counter(MeterRegistry registry, String name, String tag, String value) {
        return registry.find(name).tag(tag, value).counters().stream().mapToDouble(Counter::count).sum();
    }

    private static Timer timer(MeterRegistry registry, String name, String result) {
        Timer t = registry.find(name).tags("task", "metered_charge", "result", result).timer();
        assertTrue(t != null, name + " is registered");
        return t;
    }

    private static void await(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting");
            Thread.sleep(20);
        }
    }
}
