-- Moves job $1 from one of the states $2 to state $3. Finishing releases the job's key
-- (trigger jobs_release_key).
UPDATE {schema}.jobs
   SET state = $3, finished_at = now(), lease_expires_at = NULL
 WHERE id = $1 AND state = ANY ($2)
