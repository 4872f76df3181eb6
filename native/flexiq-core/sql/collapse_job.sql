-- One debounced or throttled job (see enqueue_flow): the request's fields, then whether a new
-- or replaced job due now is announced within the statement (see insert_jobs.sql). Each
-- parameter appears once, in order, so that the statement also runs with JDBC's positional
-- placeholders.
SELECT o.job_id, o.created, o.conflict::text, o.decision
  FROM {schema}.enqueue_flow({request_args:$[]}, ({param:+1}::boolean[])[1]) o
