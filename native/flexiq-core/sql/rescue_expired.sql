-- Running jobs whose lease has passed (their worker died or stalled) go back to the queue as a
-- failed attempt, due at once; jobs with no attempts left are dead-lettered. Returns each job
-- moved, for the worker's log and listeners.
WITH expired AS (
    -- Found by lease (index jobs_leases) and locked in id order, like completions, lease
    -- extensions and give-backs, so that a rescue and a batch over the same jobs wait for each
    -- other instead of deadlocking. A job finished or extended meanwhile is passed over.
    SELECT j.id
      FROM {schema}.jobs j
     WHERE j.state = 'running' AND j.lease_expires_at < now()
     ORDER BY j.id
       FOR UPDATE OF j
)
UPDATE {schema}.jobs j
   SET state = CASE WHEN j.attempt < j.max_attempts THEN 'retryable' ELSE 'dead' END,
       run_at = now(),
       finished_at = CASE WHEN j.attempt < j.max_attempts THEN NULL ELSE now() END,
       lease_expires_at = NULL,
       last_error = 'lease expired during attempt ' || j.attempt
 WHERE j.id = ANY (ARRAY(SELECT e.id FROM expired e))
RETURNING j.id, j.queue, j.task, j.attempt, j.max_attempts, j.state = 'dead' AS dead
