-- Completes the jobs of the attempts ($1 job ids, $2 attempt numbers) that still hold them;
-- returns their ids. Completing releases each job's key (trigger jobs_release_key).
WITH held AS ({held_attempts}
)
UPDATE {schema}.jobs j
   SET state = 'completed', finished_at = now(), lease_expires_at = NULL
 WHERE j.id = ANY (ARRAY(SELECT h.id FROM held h))
RETURNING j.id
