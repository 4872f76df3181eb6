-- One keyed job, the common case, in plain SQL (enqueue_keyed.sql takes batches). Parameters
-- as there, each once and in order, so that the statement also runs with JDBC's positional
-- placeholders.
--
-- A key held by an equivalent request is only read: a replay writes nothing, so its commit
-- waits on no disk. A free key is taken by one INSERT … ON CONFLICT DO NOTHING; the unique
-- index decides. Whatever else can happen goes to enqueue_keyed within the same statement: a
-- holder that asks differently (the conflict comes back as data), a holder whose retention has
-- closed, and a holder that a racing transaction committed after this statement began, which
-- ON CONFLICT waits for but this statement's snapshot cannot see (enqueue_keyed reads with
-- fresh snapshots).
--
-- {announce}: whether a new job due now is announced within the statement, so that PostgreSQL
-- delivers the wake-up when the caller's transaction commits. FlexiQ's own connections announce
-- after the commit instead (announce.sql): a NOTIFY in the enqueueing transaction would make
-- concurrent commits wait for each other's disk flush.
WITH p AS MATERIALIZED (
    SELECT $1::bytea[] AS payload, $2::text[] AS queue, $3::text[] AS task,
           $4::integer[] AS priority, $5::bigint[] AS run_at_micros, $6::bigint[] AS delay_ms,
           $7::integer[] AS max_attempts, $8::bigint[] AS retry_initial_ms,
           $9::bigint[] AS retry_max_ms, $10::double precision[] AS retry_multiplier,
           $11::double precision[] AS retry_jitter, $12::bigint[] AS timeout_ms,
           $13::jsonb[] AS tags, $14::bigint[] AS key_retention_ms, $15::text[] AS scope,
           $16::bytea[] AS key_digest, $17::text[] AS key_preview, $18::integer[] AS id_rank
), holder AS MATERIALIZED (
    SELECT j.id,
           j.held_until IS NULL OR j.held_until > now() AS live,
           (j.queue, j.task, j.payload, j.priority, j.requested_run_at, j.requested_delay_ms,
            j.max_attempts, j.retry_initial_ms, j.retry_max_ms, j.retry_multiplier,
            j.retry_jitter, j.timeout_ms, j.tags, j.key_retention_ms)
           IS NOT DISTINCT FROM
           (p.queue[1], p.task[1], p.payload[1], p.priority[1],
            {schema}.micros_to_timestamptz(p.run_at_micros[1]), p.delay_ms[1], p.max_attempts[1],
            p.retry_initial_ms[1], p.retry_max_ms[1], p.retry_multiplier[1], p.retry_jitter[1],
            p.timeout_ms[1], p.tags[1], p.key_retention_ms[1]) AS same
      FROM p, {schema}.jobs j
     -- Sub-selects rather than a join condition: the key then always reaches the index as a
     -- parameter, whatever plan the statistics suggest (a join may scan every held key).
     WHERE j.key_held AND j.key_scope = (SELECT p.scope[1] FROM p)
       AND j.key_digest = (SELECT p.key_digest[1] FROM p)
), placed AS (
    -- The id is drawn apart from new_jobs' arguments, which must hold no volatile call for
    -- PostgreSQL to inline the function; and only when no holder was found.
    INSERT INTO {schema}.jobs
    SELECT n.*
      FROM p,
           LATERAL (SELECT ARRAY[nextval('{schema}.jobs_id_seq')] AS id OFFSET 0) i,
           LATERAL {schema}.new_jobs(i.id, p.payload, p.queue, p.task, p.priority,
               p.run_at_micros, p.delay_ms, p.max_attempts, p.retry_initial_ms, p.retry_max_ms,
               p.retry_multiplier, p.retry_jitter, p.timeout_ms, p.tags, p.key_retention_ms,
               p.scope, p.key_digest, p.key_preview) n
     WHERE NOT EXISTS (SELECT FROM holder)
        ON CONFLICT (key_scope, key_digest) WHERE key_held DO NOTHING
    RETURNING id, state
), replayed AS (
    SELECT h.id FROM holder h WHERE h.live AND h.same
), answer AS (
    SELECT placed.id AS job_id, true AS created, NULL::jsonb AS conflict,
           placed.state = 'available' AS due
      FROM placed
    UNION ALL
    SELECT replayed.id, false, NULL, false FROM replayed
    UNION ALL
    SELECT k.job_id, k.created, k.conflict, k.created
      FROM p,
           {schema}.enqueue_keyed(p.payload, p.queue, p.task, p.priority, p.run_at_micros,
               p.delay_ms, p.max_attempts, p.retry_initial_ms, p.retry_max_ms,
               p.retry_multiplier, p.retry_jitter, p.timeout_ms, p.tags, p.key_retention_ms,
               p.scope, p.key_digest, p.key_preview, p.id_rank) k
     WHERE NOT EXISTS (SELECT FROM placed) AND NOT EXISTS (SELECT FROM replayed)
)
SELECT a.job_id, a.created, a.conflict::text
  FROM answer a
  LEFT JOIN LATERAL (SELECT {schema}.announce(p.queue) FROM p WHERE {announce} AND a.due) n
    ON true
