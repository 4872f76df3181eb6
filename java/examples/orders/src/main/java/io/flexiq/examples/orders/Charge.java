package io.flexiq.examples.orders;

import io.flexiq.Task;
import java.time.Instant;

/**
 * The payload of a charge job: which order, how much, and when it was placed.
 *
 * @param orderId the order's id
 * @param amountCents the amount to charge, in cents
 * @param placedAt when the order was placed
 */
public record Charge(String orderId, long amountCents, Instant placedAt) {
    /** The task of charging an order. */
    public static final Task<Charge> TASK = Task.of("charge_order", Charge.class);
}
