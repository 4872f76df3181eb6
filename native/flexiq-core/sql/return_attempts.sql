-- Gives back running attempts ($1 job ids, $2 attempt numbers) that a worker shutting down did
-- not finish: the jobs are due again at once, and the unfinished attempt does not count.
-- Returns the ids of the jobs given back; their queues are announced to idle workers.
WITH held AS ({held_attempts}
), returned AS (
    UPDATE {schema}.jobs j
       SET state = 'available', attempt = j.attempt - 1, run_at = now(), lease_expires_at = NULL
     WHERE j.id = ANY (ARRAY(SELECT h.id FROM held h))
    RETURNING j.id, j.queue
), announced AS (
    SELECT {schema}.announce(array_agg(DISTINCT r.queue)) FROM returned r
)
SELECT r.id FROM returned r, announced
