-- The single enqueues of several callers, sent together from a pool connection (see the core's
-- grouping module). Parameters as for enqueue_keyed.sql; entries come sorted by key, so that
-- racing statements take their keys in the same order.
--
-- Unlike a batch, each entry stands alone: one row per entry, in the order sent, with the job
-- and whether this statement created it. A NULL job is an entry the statement leaves to its
-- caller, who sends it again alone: a key held for a different request (the conflict), a
-- holder whose retention has closed, or a key that a racing transaction took after this
-- statement began. An entry whose key is free is inserted; one held by an equivalent live
-- request is only read, and draws no id. The queues of new jobs are announced after the commit.
WITH p AS MATERIALIZED (
    SELECT $1::bytea[] AS payload, $2::text[] AS queue, $3::text[] AS task,
           $4::integer[] AS priority, $5::bigint[] AS run_at_micros, $6::bigint[] AS delay_ms,
           $7::integer[] AS max_attempts, $8::bigint[] AS retry_initial_ms,
           $9::bigint[] AS retry_max_ms, $10::double precision[] AS retry_multiplier,
           $11::double precision[] AS retry_jitter, $12::bigint[] AS timeout_ms,
           $13::jsonb[] AS tags, $14::bigint[] AS key_retention_ms, $15::jsonb[] AS flow,
           $16::text[] AS payload_codec, $17::bytea[] AS payload_digest, $18::text[] AS scope,
           $19::bytea[] AS key_digest, $20::text[] AS key_preview, $21::integer[] AS id_rank
), e AS MATERIALIZED (
    SELECT t.*
      FROM p,
           unnest(p.payload, p.queue, p.task, p.priority, p.run_at_micros, p.delay_ms,
                  p.max_attempts, p.retry_initial_ms, p.retry_max_ms, p.retry_multiplier,
                  p.retry_jitter, p.timeout_ms, p.tags, p.key_retention_ms, p.flow,
                  p.payload_digest, p.scope, p.key_digest, p.id_rank)
               WITH ORDINALITY AS t(payload, queue, task, priority, run_at_micros, delay_ms,
                                    max_attempts, retry_initial_ms, retry_max_ms,
                                    retry_multiplier, retry_jitter, timeout_ms, tags,
                                    key_retention_ms, flow, payload_digest, scope,
                                    key_digest, id_rank, ord)
), holder AS MATERIALIZED (
    SELECT e.ord, e.id_rank, h.id, h.usable
      FROM e
      -- OFFSET 0 keeps the lookup apart, so that each key reaches the index as a parameter,
      -- whatever plan the statistics suggest (a join may scan every held key).
      LEFT JOIN LATERAL (
          SELECT j.id,
                 (j.held_until IS NULL OR j.held_until > now())
                 AND (j.queue, j.task, {schema}.payload_fingerprint(j.payload, j.payload_digest),
                      j.priority, j.requested_run_at,
                      j.requested_delay_ms, j.max_attempts, j.retry_initial_ms, j.retry_max_ms,
                      j.retry_multiplier, j.retry_jitter, j.timeout_ms, j.tags,
                      j.key_retention_ms, j.flow)
                     IS NOT DISTINCT FROM
                     (e.queue, e.task, {schema}.payload_fingerprint(e.payload, e.payload_digest),
                      e.priority,
                      {schema}.micros_to_timestamptz(e.run_at_micros), e.delay_ms,
                      e.max_attempts, e.retry_initial_ms, e.retry_max_ms, e.retry_multiplier,
                      e.retry_jitter, e.timeout_ms, e.tags, e.key_retention_ms, e.flow) AS usable
            FROM {schema}.jobs j
           WHERE j.key_held AND j.key_scope = e.scope AND j.key_digest = e.key_digest
          OFFSET 0) h ON true
), drawn AS MATERIALIZED (
    -- Ids for the entries whose key is free (or that have none), in the callers' order.
    SELECT f.ord, nextval('{schema}.jobs_id_seq') AS id
      FROM (SELECT ord FROM holder WHERE id IS NULL ORDER BY id_rank OFFSET 0) f
), placed AS (
    -- new_jobs takes every entry; those with no id drawn are left out.
    INSERT INTO {schema}.jobs
    SELECT n.*
      FROM p,
           LATERAL (SELECT ARRAY(SELECT d.id FROM e LEFT JOIN drawn d USING (ord)
                                  ORDER BY e.ord) AS id OFFSET 0) i,
           LATERAL {schema}.new_jobs(i.id, p.payload, p.queue, p.task, p.priority,
               p.run_at_micros, p.delay_ms, p.max_attempts, p.retry_initial_ms, p.retry_max_ms,
               p.retry_multiplier, p.retry_jitter, p.timeout_ms, p.tags, p.key_retention_ms,
               p.flow, p.payload_codec, p.payload_digest, p.scope, p.key_digest,
               p.key_preview) n
     WHERE n.id IS NOT NULL
        ON CONFLICT (key_scope, key_digest) WHERE key_held DO NOTHING
    RETURNING id
)
SELECT coalesce(placed.id, CASE WHEN h.usable THEN h.id END), placed.id IS NOT NULL
  FROM holder h
  LEFT JOIN drawn d USING (ord)
  LEFT JOIN placed ON placed.id = d.id
 ORDER BY h.ord
