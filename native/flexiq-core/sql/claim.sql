-- Claims up to $3 due jobs of the queues in $1 whose task is in $2, each under a lease of $4
-- milliseconds, marked with claim token $5: by priority, then due time. Each queue is read in
-- the order of its jobs_due index, so that a claim reads about as many rows as it takes; SKIP
-- LOCKED lets concurrent claimers pass each other's rows. The claimed ids reach the update as
-- an array, so that every plan, whatever the statistics, updates them by primary key (a join
-- on the claimed rows lets a cached generic plan, guessing their number from LIMIT $3, hash
-- the whole table); the jobs come back in claim order, each with how long it waited from its due
-- time to this claim (µs).
WITH async AS MATERIALIZED (
    -- The claim's commit does not wait for its disk flush: an idle worker starts its job a flush
    -- sooner. Should PostgreSQL crash before the flush (a fraction of a second), the claim is
    -- forgotten and the job runs again, as it would once a lost worker's lease passed; the
    -- attempt's outcome, committed durably, flushes its claim with it.
    SELECT set_config('synchronous_commit', 'off', true)
), next AS (
    SELECT c.id
      FROM async, unnest($1::text[]) AS q(name),
           LATERAL (SELECT j.id, j.priority, j.run_at
                      FROM {schema}.jobs j
                     WHERE j.queue = q.name
                       AND j.state IN ('available', 'scheduled', 'retryable')
                       AND j.task = ANY ($2)
                       AND j.run_at <= now()
                     ORDER BY j.priority DESC, j.run_at, j.id
                     LIMIT $3
                       FOR UPDATE SKIP LOCKED) c
     ORDER BY c.priority DESC, c.run_at, c.id
     LIMIT $3
), claimed AS (
    UPDATE {schema}.jobs j
       SET state = 'running', attempt = j.attempt + 1, started_at = now(),
           lease_expires_at = now() + $4 * interval '1 millisecond', claim_token = $5
     WHERE j.id = ANY (ARRAY(SELECT n.id FROM next n))
    RETURNING j.id, j.queue, j.task, j.payload, j.attempt, j.max_attempts, j.timeout_ms, j.priority, j.run_at
)
SELECT c.id, c.queue, c.task, c.payload, c.attempt, c.max_attempts, c.timeout_ms,
       (extract(epoch FROM now() - c.run_at) * 1000000)::bigint AS waited_us
  FROM claimed c
 ORDER BY c.priority DESC, c.run_at, c.id
