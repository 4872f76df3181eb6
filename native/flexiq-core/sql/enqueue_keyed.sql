-- A batch with keys: one call of enqueue_keyed. The first seventeen parameters are the job
-- columns (with the payload codec's id and digest), then come each key's scope, digest and preview, and each entry's rank in the
-- caller's order. Each parameter appears once, in order, so that the statement also runs with
-- JDBC's positional placeholders; the casts let a driver send any array type.
--
-- {announce}: whether the queues of new jobs due now are announced within the statement (see
-- enqueue_one_keyed.sql). A batch announces its queues once any of its entries made a job.
WITH p AS MATERIALIZED (
    SELECT $1::bytea[] AS payload, $2::text[] AS queue, $3::text[] AS task,
           $4::integer[] AS priority, $5::bigint[] AS run_at_micros, $6::bigint[] AS delay_ms,
           $7::integer[] AS max_attempts, $8::bigint[] AS retry_initial_ms,
           $9::bigint[] AS retry_max_ms, $10::double precision[] AS retry_multiplier,
           $11::double precision[] AS retry_jitter, $12::bigint[] AS timeout_ms,
           $13::jsonb[] AS tags, $14::bigint[] AS key_retention_ms, $15::jsonb[] AS flow,
           $16::text[] AS payload_codec, $17::bytea[] AS payload_digest, $18::text[] AS scope,
           $19::bytea[] AS key_digest, $20::text[] AS key_preview, $21::integer[] AS id_rank
), answer AS MATERIALIZED (
    SELECT k.*
      FROM p,
           {schema}.enqueue_keyed(p.payload, p.queue, p.task, p.priority, p.run_at_micros,
               p.delay_ms, p.max_attempts, p.retry_initial_ms, p.retry_max_ms,
               p.retry_multiplier, p.retry_jitter, p.timeout_ms, p.tags, p.key_retention_ms,
               p.flow, p.payload_codec, p.payload_digest, p.scope, p.key_digest, p.key_preview,
               p.id_rank) WITH ORDINALITY AS k
)
SELECT a.job_id, a.created, a.conflict::text, NULL::text AS decision
  FROM answer a
  LEFT JOIN (SELECT {schema}.announce(ARRAY(
                 SELECT DISTINCT e.queue FROM unnest(p.queue, p.run_at_micros, p.delay_ms)
                                              AS e(queue, run_at_micros, delay_ms)
                  WHERE coalesce(e.delay_ms, 0) = 0
                    AND coalesce({schema}.micros_to_timestamptz(e.run_at_micros), now()) <= now()))
               FROM p
              WHERE {announce} AND EXISTS (SELECT FROM answer WHERE answer.created)) n
    ON true
 ORDER BY a.ordinality
