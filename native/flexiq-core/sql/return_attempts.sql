-- Gives back running attempts ($1 job ids, $2 attempt numbers) that a worker shutting down did
-- not finish: the jobs are due again at once, and the unfinished attempt does not count.
-- Returns how many; their queues are announced to idle workers.
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
), returned AS (
    UPDATE {schema}.jobs j
       SET state = 'available', attempt = j.attempt - 1, run_at = now(), lease_expires_at = NULL
     WHERE j.id = ANY (ARRAY(SELECT h.id FROM held h))
    RETURNING j.queue
), announced AS (
    SELECT {schema}.announce(array_agg(DISTINCT r.queue)) FROM returned r
)
SELECT count(*) FROM returned, announced
