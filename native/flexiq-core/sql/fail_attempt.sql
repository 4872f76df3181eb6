-- Records the failure ($3) of attempt $2 of running job $1, or of the attempt a rescue took it
-- from while no later attempt started (a late outcome: the handler's error replaces the
-- rescue's, and its retry is due as the policy says). With attempts left, the job waits for
-- its retry: the policy's delay for this attempt, grown by the multiplier up to the maximum,
-- spread by the jitter. Without, it is dead-lettered (which releases its key). Returns the new
-- state and due time, and whether the outcome came after a rescue.
--
-- Once the grown delay passes the maximum the maximum is taken without computing the growth:
-- power() raises an overflow error for a long run of attempts (2^1024 after 1025 failures at
-- multiplier 2), and an error here would leave the job running.
--
-- The attempt enters the job's history (attempts), replacing the row its rescue wrote.
WITH failed AS (
UPDATE {schema}.jobs j
   SET state = CASE WHEN j.attempt < j.max_attempts THEN 'retryable' ELSE 'dead' END,
       run_at = CASE WHEN j.attempt < j.max_attempts
                     THEN now() + (CASE WHEN j.retry_initial_ms = 0 THEN 0
                                        WHEN (j.attempt - 1) * ln(j.retry_multiplier)
                                             >= ln(j.retry_max_ms + 1) THEN j.retry_max_ms
                                        ELSE least(j.retry_max_ms, j.retry_initial_ms
                                                   * power(j.retry_multiplier, j.attempt - 1)) END)
                                  * (1 + j.retry_jitter * (2 * random() - 1))
                                  * interval '1 millisecond'
                     ELSE j.run_at END,
       finished_at = CASE WHEN j.attempt < j.max_attempts THEN NULL ELSE now() END,
       lease_expires_at = NULL,
       last_error = $3
 WHERE j.id = $1 AND j.attempt = $2
   AND (j.state = 'running'
        OR (j.rescued_attempt = $2 AND j.state IN ('retryable', 'dead')))
RETURNING j.id, j.attempt, j.started_at, j.claimed_by, j.state, j.run_at, j.rescued_attempt
), recorded AS (
    INSERT INTO {schema}.attempts AS a (job_id, attempt, started_at, finished_at, worker, outcome, error)
    SELECT f.id, f.attempt, f.started_at, now(), f.claimed_by, 'failed', $3
      FROM failed f
     WHERE f.started_at IS NOT NULL
        ON CONFLICT (job_id, started_at) DO UPDATE
       SET finished_at = excluded.finished_at, outcome = excluded.outcome, error = excluded.error
)
-- The due time exactly, on PostgreSQL 13 too (see job_columns.sql).
SELECT f.state,
       (extract(epoch FROM date_trunc('minute', f.run_at AT TIME ZONE 'UTC'))::bigint * 1000000
          + extract(microseconds FROM f.run_at AT TIME ZONE 'UTC')::bigint) AS run_at,
       f.rescued_attempt IS NOT NULL AS late
  FROM failed f
