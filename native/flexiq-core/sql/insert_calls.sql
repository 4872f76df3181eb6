-- The single enqueues of several callers, first try (see the producer's lanes and calls modules): each
-- entry whose key no job holds is inserted. Parameters as for enqueue_keyed.sql, without the
-- ranks; entries come sorted by key, so that racing statements take their keys in the same
-- order.
--
-- Most calls bring a new key, and this statement is what they cost: one plain insert, where
-- enqueue_calls.sql, which also answers replays, takes a third longer to start and run. An
-- entry whose key is held, or taken by a racing transaction, is not returned, and the id drawn
-- for it stays unused: the unique index alone finds the holder, where looking it up first to
-- spare the id cost each statement its own read of every key. The caller sends those entries
-- on to enqueue_calls.sql. Ids are drawn in the order sent; calls that arrived together have
-- no order of their own.
INSERT INTO {schema}.jobs
SELECT n.*
  FROM (SELECT $1::bytea[] AS payload, $2::text[] AS queue, $3::text[] AS task,
               $4::integer[] AS priority, $5::bigint[] AS run_at_micros, $6::bigint[] AS delay_ms,
               $7::integer[] AS max_attempts, $8::bigint[] AS retry_initial_ms,
               $9::bigint[] AS retry_max_ms, $10::double precision[] AS retry_multiplier,
               $11::double precision[] AS retry_jitter, $12::bigint[] AS timeout_ms,
               $13::jsonb[] AS tags, $14::bigint[] AS key_retention_ms, $15::jsonb[] AS flow,
               $16::text[] AS payload_codec, $17::bytea[] AS payload_digest,
               $18::text[] AS scope, $19::bytea[] AS key_digest, $20::text[] AS key_preview
        OFFSET 0) p,
       -- Ids are drawn apart from new_jobs' arguments, which must hold no volatile call for
       -- PostgreSQL to inline the function.
       LATERAL (SELECT ARRAY(SELECT nextval('{schema}.jobs_id_seq')
                               FROM generate_series(1, cardinality(p.payload))) AS id
                OFFSET 0) i,
       LATERAL {schema}.new_jobs(i.id, p.payload, p.queue, p.task, p.priority,
           p.run_at_micros, p.delay_ms, p.max_attempts, p.retry_initial_ms, p.retry_max_ms,
           p.retry_multiplier, p.retry_jitter, p.timeout_ms, p.tags, p.key_retention_ms,
           p.flow, p.payload_codec, p.payload_digest, p.scope, p.key_digest, p.key_preview) n
    ON CONFLICT (key_scope, key_digest) WHERE key_held DO NOTHING
RETURNING id, key_scope, key_digest
