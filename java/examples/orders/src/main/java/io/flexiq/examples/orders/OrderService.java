package io.flexiq.examples.orders;

import io.flexiq.EnqueueOptions;
import io.flexiq.JobQueue;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Places orders: the order and its charge job commit together or not at all, since the starter's
 * {@link JobQueue} enqueues on the transaction's connection. The charge is keyed by the order id,
 * so placing the same order again (a double click, a retried request) gets the same job back;
 * placing it again with another amount is refused ({@link io.flexiq.IdempotencyConflictException}).
 */
@Service
public class OrderService {
    private final Orders orders;
    private final JobQueue queue;
    private final Clock clock;

    /** A service storing orders in {@code orders} and enqueueing their charges on {@code queue}. */
    public OrderService(Orders orders, JobQueue queue, Clock clock) {
        this.orders = orders;
        this.queue = queue;
        this.clock = clock;
    }

    /**
     * Stores the order, if new, and enqueues its charge.
     *
     * @return the charge job's id: the same for every placing of one order
     */
    @Transactional
    public String placeOrder(String orderId, long amountCents) {
        // PostgreSQL keeps microseconds: the repeat's payload must equal the first one's.
        Instant placedAt = orders.place(orderId, amountCents, clock.instant().truncatedTo(ChronoUnit.MICROS));
        return queue.enqueue(Charge.TASK, new Charge(orderId, amountCents, placedAt),
                EnqueueOptions.builder().idempotencyKey("charge:" + orderId).build());
    }
}
