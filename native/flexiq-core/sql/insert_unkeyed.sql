-- A batch without keys: one plain insert. Ids are drawn in array order, so ascending ids are
-- input order; they are drawn apart from new_jobs' arguments, which must hold no volatile call
-- for PostgreSQL to inline the function. Rows have the shape enqueue_keyed returns. Each
-- parameter appears once, in order, so that the statement also runs with JDBC's positional
-- placeholders.
--
-- {announce}: whether the queues of new jobs due now are announced within the statement (see
-- enqueue_one_keyed.sql).
WITH placed AS (
    INSERT INTO {schema}.jobs
    SELECT n.*
      FROM (SELECT $1::bytea[] AS payload, $2::text[] AS queue, $3::text[] AS task,
                   $4::integer[] AS priority, $5::bigint[] AS run_at_micros,
                   $6::bigint[] AS delay_ms, $7::integer[] AS max_attempts,
                   $8::bigint[] AS retry_initial_ms, $9::bigint[] AS retry_max_ms,
                   $10::double precision[] AS retry_multiplier,
                   $11::double precision[] AS retry_jitter, $12::bigint[] AS timeout_ms,
                   $13::jsonb[] AS tags, $14::bigint[] AS key_retention_ms,
                   $15::jsonb[] AS flow, $16::text[] AS payload_codec,
                   $17::bytea[] AS payload_digest
            OFFSET 0) p,
           LATERAL (SELECT ARRAY(SELECT nextval('{schema}.jobs_id_seq')
                                   FROM generate_series(1, cardinality(p.payload))) AS id
                    OFFSET 0) i,
           LATERAL {schema}.new_jobs(i.id, p.payload, p.queue, p.task, p.priority,
               p.run_at_micros, p.delay_ms, p.max_attempts, p.retry_initial_ms, p.retry_max_ms,
               p.retry_multiplier, p.retry_jitter, p.timeout_ms, p.tags, p.key_retention_ms,
               p.flow, p.payload_codec, p.payload_digest, NULL, NULL, NULL) n
    RETURNING id, queue, state
)
SELECT placed.id, true, NULL::text, NULL::text AS decision
  FROM placed
  LEFT JOIN (SELECT {schema}.announce(ARRAY(
                 SELECT DISTINCT d.queue FROM placed d WHERE d.state = 'available'))
              WHERE {announce}) n
    ON true
