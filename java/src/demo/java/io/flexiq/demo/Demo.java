package io.flexiq.demo;

import io.flexiq.CanonicalJsonSerializer;
import io.flexiq.DedupKeys;
import io.flexiq.EnqueueOptions;
import io.flexiq.Task;
import java.nio.charset.StandardCharsets;

/** Shows the dedup key recipe and how enqueue options resolve to a key. */
public final class Demo {
    private Demo() {}

    /** The demo's payload type. */
    public record Order(long customerId, long amountCents) {}

    /** Runs the demo. */
    public static void main(String[] args) {
        Task<Order> charge = Task.of("charge_customer", Order.class).idempotent(true);
        Order order = new Order(42, 1000);
        byte[] payload = new CanonicalJsonSerializer().serialize(order);
        System.out.println("payload (canonical JSON): " + new String(payload, StandardCharsets.UTF_8));
        show("task default (idempotent)", charge, EnqueueOptions.defaults(), payload);
        show("idempotent(false)", charge, EnqueueOptions.builder().idempotent(false).build(), payload);
        show("idempotencyKey", charge, EnqueueOptions.builder().idempotencyKey("charge:42:1000").build(), payload);
        show("uniqueKey beats idempotencyKey", charge,
                EnqueueOptions.builder().idempotencyKey("charge:42:1000").uniqueKey("order-42").build(), payload);
    }

    private static void show(String label, Task<?> task, EnqueueOptions options, byte[] payload) {
        System.out.printf("%-32s -> %s%n", label, DedupKeys.resolve(task, options, payload).orElse("(no key)"));
    }
}
