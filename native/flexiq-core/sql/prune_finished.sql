-- Deletes finished jobs whose retention has passed, at most $4 of each final state, oldest
-- first: completed jobs finished more than $1 ms ago, cancelled ones $2 ms ago, dead ones $3 ms
-- ago. A job whose key is still held stays, so that a replay still finds it, until its key is
-- released (expire_keys); such a job is read again by each pass until then. Found by index
-- jobs_finished, each state's oldest first: each state is named by a constant, so that the
-- index's predicate is implied. Rows that another transaction holds (a redrive, a purge) are
-- passed over, and the locks taken are checked again, so that a job redriven meanwhile stays.
-- Checkpoints and redrive keys go by cascade. Returns how many went, by state.
WITH completed AS (
    SELECT j.id
      FROM {schema}.jobs j
     WHERE j.state = 'completed' AND NOT j.key_held
       AND j.finished_at < now() - $1::bigint * interval '1 millisecond'
     ORDER BY j.finished_at
     LIMIT $4
       FOR UPDATE OF j SKIP LOCKED
), cancelled AS (
    SELECT j.id
      FROM {schema}.jobs j
     WHERE j.state = 'cancelled' AND NOT j.key_held
       AND j.finished_at < now() - $2::bigint * interval '1 millisecond'
     ORDER BY j.finished_at
     LIMIT $4
       FOR UPDATE OF j SKIP LOCKED
), dead AS (
    SELECT j.id
      FROM {schema}.jobs j
     WHERE j.state = 'dead' AND NOT j.key_held
       AND j.finished_at < now() - $3::bigint * interval '1 millisecond'
     ORDER BY j.finished_at
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
