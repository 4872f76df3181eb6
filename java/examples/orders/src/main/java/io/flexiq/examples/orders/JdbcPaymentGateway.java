package io.flexiq.examples.orders;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * A stand-in for a payment provider: records payments in the payments table, one per
 * idempotency key, and declines amounts over {@value #LIMIT_CENTS} cents.
 */
@Component
public class JdbcPaymentGateway implements PaymentGateway {
    /** The largest amount charged; above it, charges are declined. */
    public static final long LIMIT_CENTS = 1_000_000;

    private final JdbcTemplate jdbc;

    /** A gateway writing to the application's database. */
    public JdbcPaymentGateway(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public String charge(String orderId, long amountCents, String idempotencyKey) throws PaymentDeclinedException {
        if (amountCents > LIMIT_CENTS) {
            throw new PaymentDeclinedException("declined: " + amountCents + " cents is over the limit of " + LIMIT_CENTS);
        }
        jdbc.update("INSERT INTO payments (idempotency_key, order_id, amount_cents) VALUES (?, ?, ?) "
                + "ON CONFLICT (idempotency_key) DO NOTHING", idempotencyKey, orderId, amountCents);
        return "pay-" + idempotencyKey;
    }
}
