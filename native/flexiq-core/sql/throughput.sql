-- Jobs completed and dead-lettered per queue and minute, over the last $1 milliseconds, read
-- through jobs_finished_at (the index alone, where the visibility map allows). Minutes are
-- those of UTC, as microseconds since the epoch; minutes without any are left out.
SELECT j.queue,
       (extract(epoch FROM date_trunc('minute', j.finished_at, 'UTC')) * 1000000)::bigint
           AS minute,
       count(*) FILTER (WHERE j.state = 'completed') AS completed,
       count(*) FILTER (WHERE j.state = 'dead') AS dead
  FROM {schema}.jobs j
 WHERE j.finished_at > now() - $1 * interval '1 millisecond'
   AND j.state IN ('completed', 'dead')
 GROUP BY 1, 2
 ORDER BY 1, 2
