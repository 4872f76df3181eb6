package io.flexiq.examples.orders;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexiq.PayloadSerializer;
import io.flexiq.TestQueue;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The service alone, in test mode: no database; jobs run at once through the application's own
 * JSON mapper (Spring Boot's, with application.properties), as in production ({@link ApplicationJson}).
 */
class OrderServiceTest {
    private static PayloadSerializer applicationSerializer;

    private final Map<String, String> status = new LinkedHashMap<>();
    private final List<String> payments = new ArrayList<>();
    private final Orders orders = new Orders() {
        @Override
        public Instant place(String id, long amountCents, Instant now) {
            status.putIfAbsent(id, "placed");
            return now;
        }

        @Override
        public void markCharged(String id, String paymentReference) {
            status.put(id, "charged by " + paymentReference);
        }
    };

    @BeforeAll
    static void readApplicationJson() {
        applicationSerializer = ApplicationJson.serializer();
    }

    @Test
    void placingAnOrderChargesItWithThePayloadAsPlaced() {
        Instant placedAt = Instant.parse("2026-11-30T23:14:10.123456Z");
        List<Charge> seen = new ArrayList<>();
        ChargeHandler handler = new ChargeHandler((orderId, amountCents, key) -> {
            payments.add(orderId + ":" + amountCents);
            return "pay-1";
        }, orders);
        TestQueue queue = TestQueue.create(applicationSerializer)
                .handle(Charge.TASK, (charge, job) -> {
                    seen.add(charge);
                    handler.handle(charge, job);
                });
        // PostgreSQL keeps microseconds; the service drops the clock's nanoseconds.
        OrderService service = new OrderService(orders, queue,
                Clock.fixed(placedAt.plusNanos(789), ZoneOffset.UTC));

        service.placeOrder("order-1", 1200);

        assertEquals(List.of(new Charge("order-1", 1200, placedAt)), seen);
        assertEquals(List.of("order-1:1200"), payments);
        assertEquals("charged by pay-1", status.get("order-1"));
    }
}
