-- Moves job $1 from one of the states $2 to state $3 (with error $4); with $5 set, only while
-- it runs attempt $5. Finishing releases the job's key (trigger jobs_release_key).
UPDATE {schema}.jobs
   SET state = $3, finished_at = now(), lease_expires_at = NULL,
       last_error = coalesce($4, last_error)
 WHERE id = $1 AND state = ANY ($2) AND ($5::integer IS NULL OR attempt = $5)
