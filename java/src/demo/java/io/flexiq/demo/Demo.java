package io.flexiq.demo;

import io.flexiq.DedupKeys;
import io.flexiq.EnqueueOptions;
import io.flexiq.EnqueueRequest;
import io.flexiq.EnqueueResult;
import io.flexiq.FlexiQ;
import io.flexiq.IdempotencyConflictException;
import io.flexiq.Task;
import io.flexiq.testing.LocalPostgres;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * FlexiQ's idempotent enqueue in four stories: a double-click, a webhook redelivery, a key
 * reused for a different request, and a bulk enqueue with duplicates.
 *
 * <p>Uses the database in {@code FLEXIQ_DATABASE_URL}; without one it starts a private
 * PostgreSQL from the machine's binaries and removes it at exit.
 */
public final class Demo {
    private Demo() {}

    /** The demo's payload. */
    public record Order(long customerId, long amountCents) {}

    /** A webhook's payload. */
    public record Delivery(String provider, String eventId) {}

    static final Task<Order> CHARGE_CUSTOMER = Task.of("charge_customer", Order.class).idempotent(true);
    static final Task<Delivery> HANDLE_WEBHOOK = Task.of("handle_webhook", Delivery.class);

    /** Runs the demo. */
    public static void main(String[] args) {
        String url = System.getenv("FLEXIQ_DATABASE_URL");
        if (url != null && !url.isEmpty()) {
            run(url);
            return;
        }
        System.out.println("FLEXIQ_DATABASE_URL is not set: starting a private PostgreSQL...");
        try (LocalPostgres postgres = LocalPostgres.start()) {
            System.out.println("  listening at " + postgres.url());
            run(postgres.url());
        }
        System.out.println("private PostgreSQL stopped and removed");
    }

    private static void run(String url) {
        String schema = "flexiq_demo_" + ProcessHandle.current().pid();
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).migrate(true).build()) {
            doubleClick(queue);
            webhookRedelivery(queue);
            conflict(queue);
            bulk(queue);
        }
    }

    private static void doubleClick(FlexiQ queue) {
        heading("1. A double-click on \"Place order\" (task idempotent: key derived from task and payload)");
        Order order = new Order(42, 1000);
        show("first click ", queue.enqueueWithResult(CHARGE_CUSTOMER, order));
        show("second click", queue.enqueueWithResult(CHARGE_CUSTOMER, order));
        byte[] canonical = "{\"amountCents\":1000,\"customerId\":42}".getBytes(StandardCharsets.UTF_8);
        System.out.println("  derived key of {\"amountCents\":1000,\"customerId\":42}: "
                + DedupKeys.autoKey("charge_customer", canonical));
    }

    private static void webhookRedelivery(FlexiQ queue) {
        heading("2. A webhook delivered again after its job completed");
        Delivery delivery = new Delivery("payments", "evt_1001");
        EnqueueOptions plain = EnqueueOptions.builder().idempotencyKey("payments:evt_1001").build();
        EnqueueResult first = queue.enqueueWithResult(HANDLE_WEBHOOK, delivery, plain);
        show("delivery            ", first);
        queue.markCompleted(first.jobId());
        System.out.println("  (job " + first.jobId() + " completed)");
        show("redelivery, no retention", queue.enqueueWithResult(HANDLE_WEBHOOK, delivery, plain));

        Delivery other = new Delivery("payments", "evt_1002");
        EnqueueOptions retained = EnqueueOptions.builder()
                .idempotencyKey("payments:evt_1002").keyRetention(Duration.ofHours(24)).build();
        EnqueueResult kept = queue.enqueueWithResult(HANDLE_WEBHOOK, other, retained);
        show("delivery, 24 h retention", kept);
        queue.markCompleted(kept.jobId());
        System.out.println("  (job " + kept.jobId() + " completed)");
        show("redelivery within 24 h ", queue.enqueueWithResult(HANDLE_WEBHOOK, other, retained));
    }

    private static void conflict(FlexiQ queue) {
        heading("3. The same key reused for a different request");
        EnqueueOptions key = EnqueueOptions.builder().uniqueKey("refund:order-77").build();
        show("refund 500 ", queue.enqueueWithResult(HANDLE_WEBHOOK, new Delivery("refunds", "500"), key));
        try {
            queue.enqueue(HANDLE_WEBHOOK, new Delivery("refunds", "900"),
                    EnqueueOptions.builder().uniqueKey("refund:order-77").priority(5).build());
        } catch (IdempotencyConflictException e) {
            System.out.println("  refund 900  -> IdempotencyConflictException: job " + e.existingJobId().orElse("?")
                    + ", fields " + e.fields());
            System.out.println("               " + e.getMessage());
        }
    }

    private static void bulk(FlexiQ queue) {
        heading("4. A bulk enqueue with duplicates (one statement)");
        List<EnqueueRequest<Order>> batch = List.of(
                EnqueueRequest.of(CHARGE_CUSTOMER, new Order(42, 1000)),
                EnqueueRequest.of(CHARGE_CUSTOMER, new Order(43, 2500)),
                EnqueueRequest.of(CHARGE_CUSTOMER, new Order(43, 2500)),
                EnqueueRequest.of(CHARGE_CUSTOMER, new Order(44, 700)));
        List<EnqueueResult> results = queue.enqueueManyWithResults(batch);
        for (int i = 0; i < results.size(); i++) {
            show("entry " + i + " " + batch.get(i).payload(), results.get(i));
        }
    }

    private static void heading(String text) {
        System.out.println();
        System.out.println(text);
    }

    private static void show(String label, EnqueueResult result) {
        System.out.println("  " + label + " -> job " + result.jobId() + ", " + result.outcome());
    }
}
