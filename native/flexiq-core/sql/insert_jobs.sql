-- New jobs, one per entry, in one plain INSERT: the statement most enqueues need. An unkeyed
-- batch, a lone job, and the single enqueues of several callers sent together (see the
-- producer's lanes and calls modules) go out as it.
--
-- {on_conflict}: for entries with keys, ON CONFLICT … DO NOTHING on the unique index of held
-- keys: an entry whose key is held, or taken by a racing transaction, is not returned, and the
-- id drawn for it stays unused; the unique index alone finds the holder, where looking it up
-- first would cost each statement its own read of every key. The caller sends those entries
-- on to resolve_keyed.sql, which answers replays. Without keys the clause is left out: it
-- would make each row a speculative insertion, for nothing.
--
-- Ids are drawn in array order, so ascending ids are the order sent; they are drawn apart from
-- new_jobs' arguments, which must hold no volatile call for PostgreSQL to inline the function.
-- Rows: the job, created (always), no conflict, no decision (the shape of every enqueue
-- statement), then the key it holds, by which the caller finds its entry.
--
-- The last parameter, an array of one boolean as every parameter is an array, says whether the queues of new jobs due now are announced within the
-- statement, so that PostgreSQL delivers the wake-up when its transaction commits: in the
-- application's transaction, and for a lone enqueue that no other overlaps. FlexiQ's own
-- connections otherwise announce after the commit (announce_queues.sql): a notification in the
-- enqueueing transaction makes concurrent commits wait for each other's disk flush.
WITH placed AS (
    INSERT INTO {schema}.jobs ({new_job_columns})
    SELECT n.*
      FROM (SELECT {request_arrays} OFFSET 0) p,
           LATERAL (SELECT ARRAY(SELECT nextval('{schema}.jobs_id_seq')
                                   FROM generate_series(1, cardinality(p.task))) AS id
                    OFFSET 0) i,
           LATERAL {schema}.new_jobs(i.id, {request_args:p.}) n
    {on_conflict}
    RETURNING id, queue, state, key_scope, key_digest
)
SELECT placed.id, true, NULL::text, NULL::text, placed.key_scope, placed.key_digest
  FROM placed
  LEFT JOIN (SELECT {schema}.announce(ARRAY(
                 SELECT DISTINCT d.queue FROM placed d WHERE d.state = 'available'))
              WHERE ({param:+1}::boolean[])[1]) n
    ON true
