-- Completes the jobs of the attempts ($1 job ids, $2 attempt numbers) that still hold them;
-- returns their ids. Completing releases each job's key (trigger jobs_release_key).
UPDATE {schema}.jobs j
   SET state = 'completed', finished_at = now(), lease_expires_at = NULL
  FROM unnest($1::bigint[], $2::integer[]) AS t(id, attempt)
 WHERE j.id = t.id AND j.attempt = t.attempt AND j.state = 'running'
RETURNING j.id
