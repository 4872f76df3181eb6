-- The registered workers, by host, process and start; times in µs since the epoch, exactly
-- (see job_columns.sql).
SELECT w.id, w.name, w.host, w.pid, w.queues, w.tasks, w.concurrency, w.lease_ms, w.version,
       (extract(epoch FROM date_trunc('minute', w.started_at AT TIME ZONE 'UTC'))::bigint * 1000000
          + extract(microseconds FROM w.started_at AT TIME ZONE 'UTC')::bigint) AS started_at_us,
       (extract(epoch FROM date_trunc('minute', w.heartbeat_at AT TIME ZONE 'UTC'))::bigint * 1000000
          + extract(microseconds FROM w.heartbeat_at AT TIME ZONE 'UTC')::bigint) AS heartbeat_at_us
  FROM {schema}.workers w
 ORDER BY w.host, w.pid, w.started_at, w.id
