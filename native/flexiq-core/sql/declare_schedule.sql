-- Declares schedule $1 (cron $2 in zone $3, task $4 on queue $5, payload $6 and options $7 to
-- trigger it with, or NULL), or renews its declaration before a tick; returns whether it is
-- paused, in which case the tick is not enqueued.
INSERT INTO {schema}.schedules AS s (name, cron, zone, task, queue, payload, options)
VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)
    ON CONFLICT (name) DO UPDATE
   SET cron = excluded.cron, zone = excluded.zone, task = excluded.task, queue = excluded.queue,
       payload = excluded.payload, options = excluded.options, seen_at = now()
RETURNING s.paused_at IS NOT NULL AS paused
