CREATE TABLE IF NOT EXISTS orders (
    id text PRIMARY KEY,
    amount_cents bigint NOT NULL,
    placed_at timestamptz NOT NULL,
    status text NOT NULL DEFAULT 'placed',
    payment_reference text
);

CREATE TABLE IF NOT EXISTS payments (
    idempotency_key text PRIMARY KEY,
    order_id text NOT NULL,
    amount_cents bigint NOT NULL
);
