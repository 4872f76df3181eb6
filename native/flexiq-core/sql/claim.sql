-- Claims up to $3 due jobs of the queues in $1 whose task is in $2, each under a lease of $4
-- milliseconds, marked with claim token $5 and claimed by process $9 (host:pid): by priority,
-- then due time. Each queue is read in
-- the order of its jobs_due index, so that a claim reads about as many rows as it takes; SKIP
-- LOCKED lets concurrent claimers pass each other's rows. A queue with a position in $6, $7
-- and $8 (priority, due time in µs, id; see positions.rs) is read on from just after it, within
-- its priority: the index entries of jobs claimed before it are not stepped over again. A queue
-- whose position is NULL is read from its front. The claimed ids reach the update as
-- an array, so that every plan, whatever the statistics, updates them by primary key (a join
-- on the claimed rows lets a cached generic plan, guessing their number from LIMIT $3, hash
-- the whole table); the jobs come back in claim order, each with how long it waited from its due
-- time to this claim (µs), and its priority and due time (µs), a position for the next claim.
--
-- A paused queue starts nothing: open_queues (queue_pauses.sql) drops it under its lock.
--
-- Limits: a job past its deadline never starts (rescue_expired dead-letters it); a job with a
-- concurrency key starts only while fewer jobs of its key run than its limit; a queue or key
-- with a rate limit starts no more jobs than the limit allows (see limit_claim).
WITH async AS MATERIALIZED (
    -- The claim's commit does not wait for its disk flush: an idle worker starts its job a flush
    -- sooner. Should PostgreSQL crash before the flush (a fraction of a second), the claim is
    -- forgotten and the job runs again, as it would once a lost worker's lease passed; the
    -- attempt's outcome, committed durably, flushes its claim with it.
    SELECT set_config('synchronous_commit', 'off', true)
), open AS MATERIALIZED (
    SELECT {schema}.open_queues($1::text[]) AS names
), next AS MATERIALIZED (
    SELECT c.id, c.queue, c.priority, c.run_at, c.concurrency_key, c.concurrency_limit
      FROM async, open, unnest($1::text[], $6::integer[], $7::bigint[], $8::bigint[])
                  AS q(name, after_priority, after_run_at_us, after_id),
           LATERAL (SELECT j.id, j.queue, j.priority, j.run_at, j.concurrency_key,
                           j.concurrency_limit
                      FROM {schema}.jobs j
                     WHERE j.queue = q.name
                       AND j.priority BETWEEN coalesce(q.after_priority, -2147483648)
                                          AND coalesce(q.after_priority, 2147483647)
                       -- Computed here rather than by micros_to_timestamptz, which a worker's
                       -- role may not execute. Exact until the year 2255; a position due later
                       -- may pass over a job due with it until the next claim from the front.
                       AND (j.run_at, j.id)
                           > (coalesce(timestamptz 'epoch'
                                       + q.after_run_at_us * interval '1 microsecond',
                                       '-infinity'),
                              coalesce(q.after_id, 0))
                       AND j.state IN ('available', 'scheduled', 'retryable')
                       AND j.task = ANY ($2)
                       AND j.run_at <= now()
                       AND (j.deadline IS NULL OR j.deadline > now())
                       -- A job whose key already runs as many jobs as its limit (its limit-th
                       -- running job exists) is passed over, so that the jobs behind it are
                       -- claimed. (This look may be a moment old; the decision below is not.)
                       AND (j.concurrency_key IS NULL
                            OR NOT EXISTS (SELECT FROM {schema}.jobs r
                                            WHERE r.concurrency_key = j.concurrency_key
                                              AND r.state = 'running'
                                           OFFSET j.concurrency_limit - 1))
                     ORDER BY j.priority DESC, j.run_at, j.id
                     LIMIT $3
                       FOR UPDATE SKIP LOCKED) c
     WHERE q.name = ANY (open.names)
     ORDER BY c.priority DESC, c.run_at, c.id
     LIMIT $3
), limited AS MATERIALIZED (
    -- Whether a limit can bear on this claim: a candidate with a concurrency key, or a rate
    -- limit on one of the queues. Without one the candidates are claimed as they are;
    -- with one, limit_claim picks those the limits let start (in a function, so that this
    -- statement stays quick to plan: PostgreSQL plans it anew for most claims).
    SELECT EXISTS (SELECT FROM next n WHERE n.concurrency_key IS NOT NULL)
           OR EXISTS (SELECT FROM {schema}.rate_limits l
                       WHERE l.name = ANY (ARRAY(SELECT 'queue:' || q.name
                                                   FROM unnest($1::text[]) AS q(name)))) AS yes
), chosen AS (
    SELECT n.id FROM next n WHERE NOT (SELECT l.yes FROM limited l)
    UNION ALL
    SELECT c.id
      FROM (SELECT array_agg(n.id ORDER BY n.priority DESC, n.run_at, n.id) AS ids,
                   array_agg(n.queue ORDER BY n.priority DESC, n.run_at, n.id) AS queues,
                   array_agg(n.concurrency_key ORDER BY n.priority DESC, n.run_at, n.id) AS keys,
                   array_agg(n.concurrency_limit ORDER BY n.priority DESC, n.run_at, n.id) AS limits
              FROM next n) a,
           {schema}.limit_claim(a.ids, a.queues, a.keys, a.limits) AS c(id)
     WHERE (SELECT l.yes FROM limited l)
), claimed AS (
    UPDATE {schema}.jobs j
       SET state = 'running', attempt = j.attempt + 1, started_at = now(),
           lease_expires_at = now() + $4 * interval '1 millisecond', lease_ms = $4, claim_token = $5,
           claimed_by = $9,
           -- A later attempt has started: a rescued attempt's outcome is refused from now on.
           rescued_attempt = NULL
     WHERE j.id = ANY (ARRAY(SELECT c.id FROM chosen c))
    RETURNING j.id, j.queue, j.task, j.payload, j.payload_codec, j.attempt, j.max_attempts,
              j.timeout_ms, j.priority, j.run_at, j.trace_context
)
SELECT c.id, c.queue, c.task, c.payload, c.payload_codec, c.attempt, c.max_attempts, c.timeout_ms,
       c.trace_context::text AS trace_context,
       (extract(epoch FROM now() - c.run_at) * 1000000)::bigint AS waited_us,
       c.priority,
       -- Exactly, on PostgreSQL 13 too (see job_columns.sql).
       (extract(epoch FROM date_trunc('minute', c.run_at AT TIME ZONE 'UTC'))::bigint * 1000000
          + extract(microseconds FROM c.run_at AT TIME ZONE 'UTC')::bigint) AS run_at_us
  FROM claimed c
 ORDER BY c.priority DESC, c.run_at, c.id
