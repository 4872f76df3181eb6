-- Gives back running attempts ($1 job ids, $2 attempt numbers) that a worker shutting down did
-- not finish: the jobs are due again at once, and the unfinished attempt does not count.
-- Returns how many; their queues are announced to idle workers.
WITH returned AS (
    UPDATE {schema}.jobs j
       SET state = 'available', attempt = j.attempt - 1, run_at = now(), lease_expires_at = NULL
      FROM unnest($1::bigint[], $2::integer[]) AS t(id, attempt)
     WHERE j.id = t.id AND j.attempt = t.attempt AND j.state = 'running'
    RETURNING j.queue
), announced AS (
    SELECT {schema}.announce(array_agg(DISTINCT r.queue)) FROM returned r
)
SELECT count(*) FROM returned, announced
