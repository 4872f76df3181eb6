-- Worker registrations, one row per running worker: what it runs and where, for operators.
-- A worker writes its row as it starts and at every heartbeat (each third of its lease), and
-- deletes it as it stops. Maintenance deletes the row of a worker that has not heartbeat for a
-- whole lease (its process died, say), as the leases of its jobs pass and rescue_expired takes
-- them back. A handful of rows: no index beyond the key.
CREATE TABLE {schema}.workers (
    id           text        PRIMARY KEY,
    name         text        NOT NULL,
    host         text        NOT NULL,
    pid          bigint      NOT NULL,
    queues       text[]      NOT NULL,
    tasks        text[]      NOT NULL,
    concurrency  integer     NOT NULL,
    lease_ms     bigint      NOT NULL CHECK (lease_ms >= 1),
    version      text        NOT NULL,
    started_at   timestamptz NOT NULL,
    heartbeat_at timestamptz NOT NULL DEFAULT now()
);
