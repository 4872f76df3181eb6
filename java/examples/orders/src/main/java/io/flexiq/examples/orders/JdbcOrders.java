package io.flexiq.examples.orders;

import java.sql.Timestamp;
import java.time.Instant;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;

/** The orders table (see {@code schema.sql}), through the application's {@link JdbcTemplate}. */
@Repository
public class JdbcOrders implements Orders {
    private final JdbcTemplate jdbc;

    /** Orders in the application's database. */
    public JdbcOrders(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public Instant place(String id, long amountCents, Instant now) {
        // The no-op update makes RETURNING give the stored row's time when the order exists.
        return jdbc.queryForObject("INSERT INTO orders (id, amount_cents, placed_at) VALUES (?, ?, ?) "
                + "ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id RETURNING placed_at",
                Timestamp.class, id, amountCents, Timestamp.from(now)).toInstant();
    }

    @Override
    public void markCharged(String id, String paymentReference) {
        jdbc.update("UPDATE orders SET status = 'charged', payment_reference = ? WHERE id = ?", paymentReference, id);
    }
}
