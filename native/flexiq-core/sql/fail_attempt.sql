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
-- The due time exactly, on PostgreSQL 13 too (see job_columns.sql).
RETURNING j.state,
          (extract(epoch FROM date_trunc('minute', j.run_at AT TIME ZONE 'UTC'))::bigint * 1000000
             + extract(microseconds FROM j.run_at AT TIME ZONE 'UTC')::bigint) AS run_at,
          j.rescued_attempt IS NOT NULL AS late
