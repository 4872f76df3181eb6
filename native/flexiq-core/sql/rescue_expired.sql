-- Running jobs whose lease has passed (their worker died or stalled) go back to the queue as a
-- failed attempt, due at once; jobs with no attempts left are dead-lettered. The attempt taken
-- is noted (rescued_attempt): its outcome, should it still arrive, is recorded as long as no
-- later attempt started. Waiting jobs whose
-- deadline has passed are dead-lettered: no attempt of theirs may start any more. Returns each
-- job moved, for the worker's log and listeners. Each rescued attempt enters the job's history
-- (attempts), where its late failure, should it come, replaces it.
WITH expired AS (
    -- Found by lease (index jobs_leases) and locked in id order, like completions, lease
    -- extensions and give-backs, so that a rescue and a batch over the same jobs wait for each
    -- other instead of deadlocking. A job finished or extended meanwhile is passed over.
    -- Sorted by id + 0, an order no index gives: planned on an empty table, reading the whole
    -- primary key in its order would look cheaper than a sort.
    SELECT j.id
      FROM {schema}.jobs j
     WHERE j.state = 'running' AND j.lease_expires_at < now()
       -- A restart of PostgreSQL gives every lease a fresh start: the workers could not extend
       -- leases while the server was down, and the attempts may be running or finished
       -- (their outcomes waiting). A lease is rescued once a whole lease has passed since the
       -- server started (a standby promoted since has its own start time, earlier).
       AND now() >= pg_postmaster_start_time() + coalesce(j.lease_ms, 0) * interval '1 millisecond'
     ORDER BY j.id + 0
       FOR UPDATE OF j
), late AS (
    -- Found by deadline (index jobs_deadlines, whose predicate these conditions imply), in
    -- bounded batches; a job a claimer or a debounce holds just now is left to the next rescue.
    SELECT j.id
      FROM {schema}.jobs j
     WHERE j.deadline <= now() AND j.finished_at IS NULL AND j.state <> 'running'
     ORDER BY j.deadline
     LIMIT 1000
       FOR UPDATE OF j SKIP LOCKED
), moved AS (
UPDATE {schema}.jobs j
   SET state = CASE WHEN j.state = 'running' AND j.attempt < j.max_attempts THEN 'retryable'
                    ELSE 'dead' END,
       run_at = now(),
       finished_at = CASE WHEN j.state = 'running' AND j.attempt < j.max_attempts THEN NULL
                          ELSE now() END,
       lease_expires_at = NULL,
       rescued_attempt = CASE WHEN j.state = 'running' THEN j.attempt ELSE j.rescued_attempt END,
       last_error = CASE WHEN j.state = 'running'
                         THEN 'lease expired during attempt ' || j.attempt
                         ELSE 'deadline ' || to_char(j.deadline AT TIME ZONE 'UTC',
                                                     'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                              || ' passed before attempt ' || j.attempt + 1 || ' could start' END
 WHERE j.id = ANY (ARRAY(SELECT e.id FROM expired e UNION ALL SELECT l.id FROM late l))
RETURNING j.id, j.queue, j.task, j.attempt, j.max_attempts, j.state = 'dead' AS dead,
          j.id = ANY (ARRAY(SELECT l.id FROM late l)) AS late, j.last_error AS error,
          j.started_at, j.claimed_by
), recorded AS (
    INSERT INTO {schema}.attempts (job_id, attempt, started_at, finished_at, worker, outcome, error)
    SELECT m.id, m.attempt, m.started_at, now(), m.claimed_by, 'lease expired', m.error
      FROM moved m
     WHERE NOT m.late AND m.started_at IS NOT NULL
        ON CONFLICT (job_id, started_at) DO NOTHING
)
SELECT m.id, m.queue, m.task, m.attempt, m.max_attempts, m.dead, m.late, m.error FROM moved m
