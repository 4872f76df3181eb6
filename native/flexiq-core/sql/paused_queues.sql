-- The paused queues, by name, each with when it was paused (µs since the epoch, exactly; see
-- job_columns.sql).
SELECT p.queue,
       (extract(epoch FROM date_trunc('minute', p.paused_at AT TIME ZONE 'UTC'))::bigint * 1000000
          + extract(microseconds FROM p.paused_at AT TIME ZONE 'UTC')::bigint) AS paused_at_us
  FROM {schema}.paused_queues p
 ORDER BY p.queue
