-- Every declared schedule by name; times in µs since the epoch, exactly (see job_columns.sql).
SELECT s.name, s.cron, s.zone, s.task, s.queue, s.payload IS NOT NULL AS triggerable,
       (extract(epoch FROM date_trunc('minute', s.seen_at AT TIME ZONE 'UTC'))::bigint * 1000000
          + extract(microseconds FROM s.seen_at AT TIME ZONE 'UTC')::bigint) AS seen_at_us,
       (extract(epoch FROM date_trunc('minute', s.paused_at AT TIME ZONE 'UTC'))::bigint * 1000000
          + extract(microseconds FROM s.paused_at AT TIME ZONE 'UTC')::bigint) AS paused_at_us
  FROM {schema}.schedules s
 ORDER BY s.name
