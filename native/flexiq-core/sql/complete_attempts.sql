-- Completes the jobs of the attempts ($1 job ids, $2 attempt numbers) that still hold them, or
-- whose lease passed while no later attempt started; returns their ids, and whether the
-- completion came after a rescue (late). Completing releases each job's key (trigger
-- jobs_release_key; a job a rescue dead-lettered released it then).
WITH held AS ({held_attempts}
)
UPDATE {schema}.jobs j
   SET state = 'completed', finished_at = now(), lease_expires_at = NULL
 WHERE j.id = ANY (ARRAY(SELECT h.id FROM held h))
RETURNING j.id, j.rescued_attempt IS NOT NULL AS late
