package io.flexiq.examples.orders;

import java.time.Instant;

/** Where orders are kept. */
public interface Orders {
    /**
     * Stores a new order, unless one with this id exists.
     *
     * @return when the order was placed: {@code now} for a new one, else the stored order's time
     */
    Instant place(String id, long amountCents, Instant now);

    /** Marks an order charged by the payment with this reference. */
    void markCharged(String id, String paymentReference);
}
