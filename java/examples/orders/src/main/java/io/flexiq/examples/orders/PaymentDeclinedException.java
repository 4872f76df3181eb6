package io.flexiq.examples.orders;

/** The payment provider refused a charge; the attempt fails and the job is retried. */
public class PaymentDeclinedException extends Exception {
    private static final long serialVersionUID = 1L;

    /** A decline with the provider's reason. */
    public PaymentDeclinedException(String reason) {
        super(reason);
    }
}
