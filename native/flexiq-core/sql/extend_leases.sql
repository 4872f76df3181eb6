-- Extends by $3 milliseconds the leases of the running attempts ($1 job ids, $2 attempt
-- numbers) that are still this worker's; returns their ids. An attempt missing from the result
-- has lost its job (its lease passed and the job moved on).
UPDATE {schema}.jobs j
   SET lease_expires_at = now() + $3 * interval '1 millisecond'
  FROM unnest($1::bigint[], $2::integer[]) AS t(id, attempt)
 WHERE j.id = t.id AND j.attempt = t.attempt AND j.state = 'running'
RETURNING j.id
