-- The jobs a claim with token $1 took that are still running that attempt, their leases renewed
-- for $2 milliseconds: for a worker that lost the claim's answer (the connection broke after the
-- claim committed). A job another worker took over since carries another token. Running jobs
-- are read through their leases (index jobs_leases).
UPDATE {schema}.jobs j
   SET lease_expires_at = now() + $2 * interval '1 millisecond'
 WHERE j.state = 'running' AND j.lease_expires_at IS NOT NULL AND j.claim_token = $1
RETURNING j.id, j.queue, j.task, j.payload, j.attempt, j.max_attempts, j.timeout_ms
