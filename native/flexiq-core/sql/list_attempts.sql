-- The attempts of job $1, oldest first: those in its history (attempts) and the one its row
-- holds while it runs or once it completed it (whose late completion after a rescue replaces
-- the rescue's row). Times in µs since the epoch, exactly (see job_columns.sql).
SELECT DISTINCT ON (a.started_at)
       a.attempt,
       (extract(epoch FROM date_trunc('minute', a.started_at AT TIME ZONE 'UTC'))::bigint * 1000000
          + extract(microseconds FROM a.started_at AT TIME ZONE 'UTC')::bigint) AS started_at_us,
       (extract(epoch FROM date_trunc('minute', a.finished_at AT TIME ZONE 'UTC'))::bigint * 1000000
          + extract(microseconds FROM a.finished_at AT TIME ZONE 'UTC')::bigint) AS finished_at_us,
       a.worker, a.outcome, a.error
  FROM (SELECT j.attempt, j.started_at, j.finished_at, j.claimed_by AS worker,
               CASE WHEN j.state = 'running' THEN 'running' ELSE 'completed' END AS outcome,
               NULL::text AS error, 0 AS preference
          FROM {schema}.jobs j
         WHERE j.id = $1 AND j.state IN ('running', 'completed') AND j.started_at IS NOT NULL
        UNION ALL
        SELECT h.attempt, h.started_at, h.finished_at, h.worker, h.outcome, h.error, 1
          FROM {schema}.attempts h
         WHERE h.job_id = $1) a
 ORDER BY a.started_at, a.preference
