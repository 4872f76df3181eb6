-- Entries with keys, answered whatever their keys' state: one call of enqueue_keyed, which
-- takes free keys, replays, takes over holders whose retention has closed, returns a conflict
-- as data, and announces new jobs due now when the last parameter says so (see
-- insert_jobs.sql). A batch with keys goes out as it, and so does a keyed entry that
-- insert_jobs.sql found held. The parameters are the request's fields, then each entry's rank
-- in the caller's order, then the announce flag, each once and in order, so that the statement
-- also runs with JDBC's positional placeholders; the casts let a driver send any array type.
SELECT k.job_id, k.created, k.conflict::text, NULL::text AS decision
  FROM {schema}.enqueue_keyed({request_args:$[]}, {param:+1}::integer[],
                              ({param:+2}::boolean[])[1]) WITH ORDINALITY AS k
 ORDER BY k.ordinality
