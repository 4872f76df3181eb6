package io.flexiq.examples.orders;

/** Charges customers. */
public interface PaymentGateway {
    /**
     * Charges an order, once per idempotency key however often it is called (as payment
     * providers' APIs do), and returns the payment's reference.
     */
    String charge(String orderId, long amountCents, String idempotencyKey) throws Exception;
}
