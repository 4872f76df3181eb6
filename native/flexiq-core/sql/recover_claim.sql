-- The jobs a claim with token $1 took that are still running that attempt, their leases renewed
-- for $2 milliseconds: for a worker that lost the claim's answer (the connection broke after the
-- claim committed). A job another worker took over since carries another token. Found by their
-- claim (index jobs_claims, of leased jobs).
UPDATE {schema}.jobs j
   SET lease_expires_at = now() + $2 * interval '1 millisecond'
 WHERE j.claim_token = $1 AND j.lease_expires_at IS NOT NULL AND j.state = 'running'
RETURNING j.id, j.queue, j.task, j.payload, j.payload_codec, j.attempt, j.max_attempts, j.timeout_ms,
          j.trace_context::text AS trace_context, (extract(epoch FROM j.started_at - j.run_at) * 1000000)::bigint AS waited_us
