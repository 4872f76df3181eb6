-- Running jobs whose lease has passed (their worker died or stalled) go back to the queue as a
-- failed attempt, due at once; jobs with no attempts left are dead-lettered.
UPDATE {schema}.jobs j
   SET state = CASE WHEN j.attempt < j.max_attempts THEN 'retryable' ELSE 'dead' END,
       run_at = now(),
       finished_at = CASE WHEN j.attempt < j.max_attempts THEN NULL ELSE now() END,
       lease_expires_at = NULL,
       last_error = 'lease expired during attempt ' || j.attempt
 WHERE j.state = 'running' AND j.lease_expires_at < now()
