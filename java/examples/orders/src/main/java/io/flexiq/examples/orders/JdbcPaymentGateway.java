package io.flexiq.examples.orders;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * A stand-in for a payment provider: records payments in the payments table, one per
 * idempotency key.
 */
@Component
public class JdbcPaymentGateway implements PaymentGateway {
    private final JdbcTemplate jdbc;

    /** A gateway writing to the application's database. */
    public JdbcPaymentGateway(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public String charge(String orderId, long amountCents, String idempotencyKey) {
        jdbc.update("INSERT INTO payments (idempotency_key, order_id, amount_cents) VALUES (?, ?, ?) "
                + "ON CONFLICT (idempotency_key) DO NOTHING", idempotencyKey, orderId, amountCents);
        return "pay-" + idempotencyKey;
    }
}
