-- Extends by $3 milliseconds the leases of the running attempts ($1 job ids, $2 attempt
-- numbers) that are still this worker's; returns their ids. An attempt missing from the result
-- has lost its job (its lease passed and the job moved on).
WITH held AS (
    -- Locked in id order, so that statements over overlapping jobs (completions, lease
    -- extensions, give-backs) wait for each other instead of deadlocking. The ids again as an
    -- index condition: planned on an empty table, the join would read the whole primary key
    -- for its order.
    SELECT j.id
      FROM unnest($1::bigint[], $2::integer[]) AS t(id, attempt)
      JOIN {schema}.jobs j ON j.id = t.id AND j.attempt = t.attempt AND j.state = 'running'
     WHERE j.id = ANY ($1::bigint[])
     ORDER BY j.id
       FOR UPDATE OF j
)
UPDATE {schema}.jobs j
   SET lease_expires_at = now() + $3 * interval '1 millisecond'
 WHERE j.id = ANY (ARRAY(SELECT h.id FROM held h))
RETURNING j.id
