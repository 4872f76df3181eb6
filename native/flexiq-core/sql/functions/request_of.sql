-- What a job was accepted with, in the shape bindings describe a request in, for naming the
-- fields a conflicting replay asks differently for. Unset options are absent; flow options
-- (deadline, debounce, throttle) sit beside the others.
CREATE OR REPLACE FUNCTION {schema}.request_of(j {schema}.jobs) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_strip_nulls(jsonb_build_object(
        'queue', j.queue,
        'task', j.task,
        'payloadSha256', encode({schema}.payload_fingerprint(j.payload, j.payload_digest), 'hex'),
        'priority', j.priority,
        -- Exactly, on PostgreSQL 13 too (see job_columns.sql).
        'runAtMicros', extract(epoch FROM date_trunc('minute', j.requested_run_at AT TIME ZONE 'UTC'))::bigint
                           * 1000000
                       + extract(microseconds FROM j.requested_run_at AT TIME ZONE 'UTC')::bigint,
        'delayMs', j.requested_delay_ms,
        'maxAttempts', j.max_attempts,
        'retryPolicy', jsonb_build_object('initialMs', j.retry_initial_ms, 'maxMs', j.retry_max_ms,
                                          'multiplier', j.retry_multiplier, 'jitter', j.retry_jitter),
        'timeoutMs', j.timeout_ms,
        'tags', j.tags,
        'keyRetentionMs', j.key_retention_ms)) || coalesce(j.flow, '{}')
$$;
