-- A job as operators see it, from a row `j` of jobs: never the raw key, only its scope,
-- preview and digest. Put into statements at {job_columns}.
j.id, j.queue, j.task, j.state, j.priority, j.attempt, j.max_attempts,
       ARRAY(SELECT jsonb_array_elements_text(j.tags)) AS tags,
       (extract(epoch FROM j.run_at) * 1000000)::bigint AS run_at,
       (extract(epoch FROM j.created_at) * 1000000)::bigint AS created_at,
       (extract(epoch FROM j.started_at) * 1000000)::bigint AS started_at,
       (extract(epoch FROM j.finished_at) * 1000000)::bigint AS finished_at,
       j.key_scope, encode(j.key_digest, 'hex') AS key_digest, j.key_preview,
       j.key_held AND (j.held_until IS NULL OR j.held_until > now()) AS key_held,
       j.last_error, j.payload_codec
