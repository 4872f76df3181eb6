-- A job as operators see it, from a row `j` of jobs: never the raw key, only its scope,
-- preview and digest. Put into statements at {job_columns}.
-- Times as microseconds since the epoch, exactly from the year 1 to 9999: whole minutes, then
-- the seconds and microseconds within the minute. (extract(epoch FROM t) * 1000000 is exact on
-- PostgreSQL 14 and later, where extract returns numeric; on 13 it returns float8, which loses
-- microseconds before about 1685 and after about 2255.)
j.id, j.queue, j.task, j.state, j.priority, j.attempt, j.max_attempts,
       ARRAY(SELECT jsonb_array_elements_text(j.tags)) AS tags,
       (extract(epoch FROM date_trunc('minute', j.run_at AT TIME ZONE 'UTC'))::bigint * 1000000
          + extract(microseconds FROM j.run_at AT TIME ZONE 'UTC')::bigint) AS run_at,
       (extract(epoch FROM date_trunc('minute', j.created_at AT TIME ZONE 'UTC'))::bigint * 1000000
          + extract(microseconds FROM j.created_at AT TIME ZONE 'UTC')::bigint) AS created_at,
       (extract(epoch FROM date_trunc('minute', j.started_at AT TIME ZONE 'UTC'))::bigint * 1000000
          + extract(microseconds FROM j.started_at AT TIME ZONE 'UTC')::bigint) AS started_at,
       (extract(epoch FROM date_trunc('minute', j.finished_at AT TIME ZONE 'UTC'))::bigint * 1000000
          + extract(microseconds FROM j.finished_at AT TIME ZONE 'UTC')::bigint) AS finished_at,
       j.key_scope, encode(j.key_digest, 'hex') AS key_digest, j.key_preview,
       j.key_held AND (j.held_until IS NULL OR j.held_until > now()) AS key_held,
       j.last_error, j.payload_codec
