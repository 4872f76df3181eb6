-- Registers worker $1, or records its heartbeat: one statement for both, so that a worker whose
-- row maintenance deleted (its heartbeats stalled for a lease) is registered again by its next
-- heartbeat. $10: when it started, µs since the epoch (computed here: a worker's role may not
-- execute micros_to_timestamptz).
INSERT INTO {schema}.workers AS w
       (id, name, host, pid, queues, tasks, concurrency, lease_ms, version, started_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, timestamptz 'epoch' + $10 * interval '1 microsecond')
    ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()
