-- The rows of new jobs, in array order, with the given ids. The one place that maps what a
-- binding sends to columns; both the plain insert and enqueue_keyed insert its rows.
--
-- p_flow: each entry's flow options (NULL when none): deadlineMicros, concurrencyKey with
-- concurrencyLimit, debounceMs (the job is due that long after acceptance, or maxWaitMs if
-- shorter), maxWaitMs, throttleMs (the key is held that long from acceptance, whatever becomes
-- of the job).

-- p_payload_codec, p_payload_digest: for a payload a codec encoded, the codec's id and the
-- digest of the serialized payload (see payload_fingerprint); NULL for one stored as serialized.

-- Earlier versions took no p_flow, then no payload codec; a different parameter list would make
-- a second function.
DROP FUNCTION IF EXISTS {schema}.new_jobs(bigint[], bytea[], text[], text[], integer[],
    bigint[], bigint[], integer[], bigint[], bigint[], double precision[], double precision[],
    bigint[], jsonb[], bigint[], text[], bytea[], text[]);
DROP FUNCTION IF EXISTS {schema}.new_jobs(bigint[], bytea[], text[], text[], integer[],
    bigint[], bigint[], integer[], bigint[], bigint[], double precision[], double precision[],
    bigint[], jsonb[], bigint[], jsonb[], text[], bytea[], text[]);

CREATE OR REPLACE FUNCTION {schema}.new_jobs(
    p_id bigint[], p_payload bytea[], p_queue text[], p_task text[], p_priority integer[],
    p_run_at_micros bigint[], p_delay_ms bigint[], p_max_attempts integer[],
    p_retry_initial_ms bigint[], p_retry_max_ms bigint[], p_retry_multiplier double precision[],
    p_retry_jitter double precision[], p_timeout_ms bigint[], p_tags jsonb[],
    p_key_retention_ms bigint[], p_flow jsonb[], p_payload_codec text[],
    p_payload_digest bytea[], p_scope text[], p_key_digest bytea[], p_key_preview text[])
RETURNS SETOF {schema}.jobs
LANGUAGE sql STABLE AS $$
    SELECT e.id, e.queue, e.task, e.payload,
           CASE WHEN due.at > now() THEN 'scheduled' ELSE 'available' END,
           e.priority, due.at, 0, e.max_attempts,
           e.retry_initial_ms, e.retry_max_ms, e.retry_multiplier, e.retry_jitter,
           e.timeout_ms, e.tags,
           e.scope, e.key_digest, e.key_preview,
           {schema}.micros_to_timestamptz(e.run_at_micros),
           e.delay_ms, e.key_retention_ms,
           e.key_digest IS NOT NULL,
           CASE WHEN e.key_digest IS NOT NULL
                THEN now() + coalesce((e.flow ->> 'throttleMs')::bigint, e.key_retention_ms)
                             * interval '1 millisecond' END,
           CASE WHEN e.key_digest IS NOT NULL
                THEN now() + (e.flow ->> 'throttleMs')::bigint * interval '1 millisecond' END,
           now(),
           NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, NULL::text, NULL::bigint,
           e.flow, {schema}.micros_to_timestamptz((e.flow ->> 'deadlineMicros')::bigint),
           e.flow ->> 'concurrencyKey', (e.flow ->> 'concurrencyLimit')::integer,
           e.payload_codec, e.payload_digest
      FROM unnest(p_id, p_payload, p_queue, p_task, p_priority, p_run_at_micros, p_delay_ms,
                  p_max_attempts, p_retry_initial_ms, p_retry_max_ms, p_retry_multiplier,
                  p_retry_jitter, p_timeout_ms, p_tags, p_key_retention_ms, p_flow, p_payload_codec,
                  p_payload_digest, p_scope, p_key_digest, p_key_preview)
               AS e(id, payload, queue, task, priority, run_at_micros, delay_ms, max_attempts,
                    retry_initial_ms, retry_max_ms, retry_multiplier, retry_jitter, timeout_ms,
                    tags, key_retention_ms, flow, payload_codec, payload_digest, scope, key_digest,
                    key_preview),
           LATERAL (SELECT coalesce(
                {schema}.micros_to_timestamptz(e.run_at_micros),
                now() + coalesce(e.delay_ms,
                                 -- least() passes over a NULL: a maxWait only shortens.
                                 least((e.flow ->> 'debounceMs')::bigint,
                                       (e.flow ->> 'maxWaitMs')::bigint),
                                 0) * interval '1 millisecond') AS at) due
$$;
