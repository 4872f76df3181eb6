-- Gives back running attempts ($1 job ids, $2 attempt numbers) that a worker shutting down did
-- not finish: the jobs are due again at once, and the unfinished attempt does not count.
UPDATE {schema}.jobs j
   SET state = 'available', attempt = j.attempt - 1, run_at = now(), lease_expires_at = NULL
  FROM unnest($1::bigint[], $2::integer[]) AS t(id, attempt)
 WHERE j.id = t.id AND j.attempt = t.attempt AND j.state = 'running'
