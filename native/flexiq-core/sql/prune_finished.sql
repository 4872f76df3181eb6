-- Deletes finished jobs whose retention has passed, at most $4 of each final state, oldest
-- first: completed jobs finished more than $1 ms ago, cancelled ones $2 ms ago, dead ones $3 ms
-- ago. A job whose key is still held stays, so that a replay still finds it, until its key is
-- released (expire_keys); each pass reads it again until then. Rows that another transaction
-- holds (a redrive, a purge) are passed over, and the rows locked are checked again, so that a
-- job redriven meanwhile stays. Checkpoints and redrive keys go by cascade. Returns how many
-- went, by state.
--
-- Each state's oldest jobs are one range of index jobs_finished (state, finished_at, queue),
-- asked for as a range of (state, finished_at) pairs: that is "this state, finished before the
-- cutoff", said in a way that no other index's predicate is implied by. Said as state = 'dead',
-- it would let the planner read every dead job through jobs_dead and sort them, at every pass.
WITH doomed AS (
    SELECT p.id
      FROM (VALUES ('completed', $1::bigint), ('cancelled', $2::bigint), ('dead', $3::bigint))
               AS r(state, retention_ms),
           LATERAL (SELECT j.id
                      FROM {schema}.jobs j
                     WHERE (j.state, j.finished_at) >= (r.state, '-infinity'::timestamptz)
                       AND (j.state, j.finished_at)
                           < (r.state, now() - r.retention_ms * interval '1 millisecond')
                       AND j.finished_at IS NOT NULL AND NOT j.key_held
                     ORDER BY j.state, j.finished_at
                     LIMIT $4
                       FOR UPDATE OF j SKIP LOCKED) p
), deleted AS (
    DELETE FROM {schema}.jobs j
     WHERE j.id = ANY (ARRAY(SELECT d.id FROM doomed d))
    RETURNING j.state
)
SELECT count(*) FILTER (WHERE state = 'completed') AS completed,
       count(*) FILTER (WHERE state = 'cancelled') AS cancelled,
       count(*) FILTER (WHERE state = 'dead') AS dead
  FROM deleted
