-- Extends by $3 milliseconds the leases of the running attempts ($1 job ids, $2 attempt
-- numbers) that are still this worker's; returns their ids. An attempt missing from the result
-- has lost its job (its lease passed and the job moved on).
WITH held AS ({held_attempts}
)
UPDATE {schema}.jobs j
   SET lease_expires_at = now() + $3 * interval '1 millisecond'
 WHERE j.id = ANY (ARRAY(SELECT h.id FROM held h))
RETURNING j.id
