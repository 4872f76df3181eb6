-- Claims up to $3 due jobs of the queues in $1 whose task is in $2, each under a lease of $4
-- milliseconds, marked with claim token $5: by priority, then due time. Each queue is read in
-- the order of its jobs_due index, so that a claim reads about as many rows as it takes; SKIP
-- LOCKED lets concurrent claimers pass each other's rows. The claimed ids reach the update as
-- an array, so that every plan, whatever the statistics, updates them by primary key (a join
-- on the claimed rows lets a cached generic plan, guessing their number from LIMIT $3, hash
-- the whole table); the jobs come back in claim order, each with how long it waited from its due
-- time to this claim (µs).
--
-- Limits: a job past its deadline never starts (rescue_expired dead-letters it); a job with a
-- concurrency key starts only while fewer jobs of its key run than its limit; a queue or key
-- with a rate limit starts no more jobs than the limit allows (see claim_limits).
WITH async AS MATERIALIZED (
    -- The claim's commit does not wait for its disk flush: an idle worker starts its job a flush
    -- sooner. Should PostgreSQL crash before the flush (a fraction of a second), the claim is
    -- forgotten and the job runs again, as it would once a lost worker's lease passed; the
    -- attempt's outcome, committed durably, flushes its claim with it.
    SELECT set_config('synchronous_commit', 'off', true)
), next AS MATERIALIZED (
    SELECT c.id, c.queue, c.priority, c.run_at, c.concurrency_key, c.concurrency_limit
      FROM async, unnest($1::text[]) AS q(name),
           LATERAL (SELECT j.id, j.queue, j.priority, j.run_at, j.concurrency_key,
                           j.concurrency_limit
                      FROM {schema}.jobs j
                     WHERE j.queue = q.name
                       AND j.state IN ('available', 'scheduled', 'retryable')
                       AND j.task = ANY ($2)
                       AND j.run_at <= now()
                       AND (j.deadline IS NULL OR j.deadline > now())
                       -- A job whose key already runs as many jobs as its limit is passed over,
                       -- so that the jobs behind it are claimed. (This count may be a moment
                       -- old; the decision below is not.)
                       AND (j.concurrency_key IS NULL
                            OR (SELECT count(*)
                                  FROM (SELECT FROM {schema}.jobs r
                                         WHERE r.concurrency_key = j.concurrency_key
                                           AND r.state = 'running'
                                         LIMIT j.concurrency_limit) l) < j.concurrency_limit)
                     ORDER BY j.priority DESC, j.run_at, j.id
                     LIMIT $3
                       FOR UPDATE SKIP LOCKED) c
     ORDER BY c.priority DESC, c.run_at, c.id
     LIMIT $3
), running AS MATERIALIZED (
    -- Each key among the candidates, with how many of its jobs run now (NULL: another claim
    -- decides for it).
    SELECT k.key, {schema}.concurrency_running(k.key) AS jobs
      FROM (SELECT DISTINCT n.concurrency_key AS key FROM next n
             WHERE n.concurrency_key IS NOT NULL) k
), free AS MATERIALIZED (
    -- The candidates their keys let start: within a key, in claim order, as many as its limit
    -- leaves room for.
    SELECT n.id, n.queue, n.priority, n.run_at, n.concurrency_key
      FROM (SELECT n.*, row_number() OVER (PARTITION BY n.concurrency_key
                                           ORDER BY n.priority DESC, n.run_at, n.id) AS rank
              FROM next n) n
      LEFT JOIN running r ON r.key = n.concurrency_key
     WHERE n.concurrency_key IS NULL OR n.rank <= n.concurrency_limit - r.jobs
), rates AS MATERIALIZED (
    -- The rate limits over those candidates, with the starts each allows now; read for the
    -- limits that exist only, so that a claim without any calls nothing.
    SELECT l.name, {schema}.rate_room(l.name) AS room
      FROM {schema}.rate_limits l
     WHERE l.name = ANY (ARRAY(SELECT DISTINCT 'queue:' || f.queue FROM free f
                               UNION
                               SELECT DISTINCT 'key:' || f.concurrency_key FROM free f
                                WHERE f.concurrency_key IS NOT NULL))
), chosen AS (
    SELECT f.id
      FROM (SELECT f.*,
                   row_number() OVER (PARTITION BY f.queue
                                      ORDER BY f.priority DESC, f.run_at, f.id) AS queue_rank,
                   row_number() OVER (PARTITION BY f.concurrency_key
                                      ORDER BY f.priority DESC, f.run_at, f.id) AS key_rank
              FROM free f) f
      LEFT JOIN rates q ON q.name = 'queue:' || f.queue
      LEFT JOIN rates k ON k.name = 'key:' || f.concurrency_key
     WHERE (q.room IS NULL OR f.queue_rank <= q.room)
       AND (k.room IS NULL OR f.concurrency_key IS NULL OR f.key_rank <= k.room)
), claimed AS (
    UPDATE {schema}.jobs j
       SET state = 'running', attempt = j.attempt + 1, started_at = now(),
           lease_expires_at = now() + $4 * interval '1 millisecond', claim_token = $5
     WHERE j.id = ANY (ARRAY(SELECT c.id FROM chosen c))
    RETURNING j.id, j.queue, j.task, j.payload, j.attempt, j.max_attempts, j.timeout_ms, j.priority,
              j.run_at, j.concurrency_key
), recorded AS (
    -- Each rate limit keeps the latest of its starts, newest first, as many as it allows.
    UPDATE {schema}.rate_limits l
       SET recent = ARRAY(SELECT t.at
                            FROM unnest(array_fill(now(), ARRAY[s.started::integer]) || l.recent)
                                 AS t(at)
                           ORDER BY t.at DESC
                           LIMIT l.starts)
      FROM (SELECT x.name, count(*) AS started
              FROM (SELECT 'queue:' || c.queue AS name FROM claimed c
                    UNION ALL
                    SELECT 'key:' || c.concurrency_key FROM claimed c
                     WHERE c.concurrency_key IS NOT NULL) x
             GROUP BY x.name) s
     WHERE l.name = s.name AND l.name = ANY (ARRAY(SELECT r.name FROM rates r))
)
SELECT c.id, c.queue, c.task, c.payload, c.attempt, c.max_attempts, c.timeout_ms,
       (extract(epoch FROM now() - c.run_at) * 1000000)::bigint AS waited_us
  FROM claimed c
 ORDER BY c.priority DESC, c.run_at, c.id
