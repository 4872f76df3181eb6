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
WITH completed AS (
    SELECT j.id
      FROM {schema}.jobs j
     WHERE (j.state, j.finished_at) >= ('completed', '-infinity')
       AND (j.state, j.finished_at) < ('completed', now() - $1::bigint * interval '1 millisecond')
       AND j.finished_at IS NOT NULL AND NOT j.key_held
     ORDER BY j.state, j.finished_at
     LIMIT $4
       FOR UPDATE OF j SKIP LOCKED
), cancelled AS (
    SELECT j.id
      FROM {schema}.jobs j
     WHERE (j.state, j.finished_at) >= ('cancelled', '-infinity')
       AND (j.state, j.finished_at) < ('cancelled', now() - $2::bigint * interval '1 millisecond')
       AND j.finished_at IS NOT NULL AND NOT j.key_held
     ORDER BY j.state, j.finished_at
     LIMIT $4
       FOR UPDATE OF j SKIP LOCKED
), dead AS (
    SELECT j.id
      FROM {schema}.jobs j
     WHERE (j.state, j.finished_at) >= ('dead', '-infinity')
       AND (j.state, j.finished_at) < ('dead', now() - $3::bigint * interval '1 millisecond')
       AND j.finished_at IS NOT NULL AND NOT j.key_held
     ORDER BY j.state, j.finished_at
     LIMIT $4
       FOR UPDATE OF j SKIP LOCKED
), deleted AS (
    DELETE FROM {schema}.jobs j
     WHERE j.id = ANY (ARRAY(SELECT c.id FROM completed c
                             UNION ALL SELECT c.id FROM cancelled c
                             UNION ALL SELECT d.id FROM dead d))
    RETURNING j.state
)
SELECT count(*) FILTER (WHERE state = 'completed') AS completed,
       count(*) FILTER (WHERE state = 'cancelled') AS cancelled,
       count(*) FILTER (WHERE state = 'dead') AS dead
  FROM deleted
