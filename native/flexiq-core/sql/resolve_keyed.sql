-- Entries with keys, answered whatever their keys' state: one call of enqueue_keyed, which
-- takes free keys, replays, takes over holders whose retention has closed, and returns a
-- conflict as data. A batch with keys goes out as it, and so does a keyed entry that
-- insert_jobs.sql found held. The parameters are the request's fields, then each entry's rank
-- in the caller's order, then whether new jobs due now are announced within the statement (see
-- insert_jobs.sql; a batch announces its queues once any of its entries made a job). Each
-- parameter appears once, in order, so that the statement also runs with JDBC's positional
-- placeholders; the casts let a driver send any array type.
WITH p AS MATERIALIZED (
    SELECT {request_arrays}, {param:+1}::integer[] AS id_rank
), answer AS MATERIALIZED (
    SELECT k.*
      FROM p,
           {schema}.enqueue_keyed({request_args:p.}, p.id_rank) WITH ORDINALITY AS k
)
SELECT a.job_id, a.created, a.conflict::text, NULL::text AS decision
  FROM answer a
  LEFT JOIN (SELECT {schema}.announce(ARRAY(
                 SELECT DISTINCT e.queue FROM unnest(p.queue, p.run_at_micros, p.delay_ms)
                                              AS e(queue, run_at_micros, delay_ms)
                  WHERE coalesce(e.delay_ms, 0) = 0
                    AND coalesce({schema}.micros_to_timestamptz(e.run_at_micros), now()) <= now()))
               FROM p
              WHERE ({param:+2}::boolean[])[1] AND EXISTS (SELECT FROM answer WHERE answer.created)) n
    ON true
 ORDER BY a.ordinality
