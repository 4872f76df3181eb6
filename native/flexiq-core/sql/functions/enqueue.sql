-- The producer API for every language: enqueues one job, deduplicated against every binding
-- that uses the same key recipe. Part of FlexiQ's public contract: its name, parameters and
-- result do not change within a major version.
--
-- The caller hashes the key itself: key_digest is the SHA-256 of the key's UTF-8 bytes and
-- key_preview a short, never complete, prefix for operators (FlexiQ's bindings show at most a
-- third of the key, at most 8 characters, then '…'). Without a digest the job has no key.
-- options is a JSON object, every field optional (null counts as absent): queue ("default"),
-- priority (0), runAt (ISO 8601 with its offset, e.g. "2026-12-01T09:00:00Z") or delayMs,
-- maxAttempts (20), retryPolicy {initialMs (1000), maxMs (3600000), multiplier (2.0), jitter
-- (0.1)}, timeoutMs, tags (an array of names) and keyRetentionMs: how long the key stays bound after acceptance
-- even once the job has finished (absent: until the job finishes; the Java binding gives
-- idempotency keys 86400000, 24 hours, by default).
--
-- Returns the job and the outcome: 'accepted' (a new job), 'replayed' (the key's job, nothing
-- written) or 'conflict' (the key's job was accepted for a different request, returned in
-- accepted; nothing written). A conflict is not an error, so it never aborts the caller's
-- transaction. Invalid input raises SQLSTATE 22023 naming the field.
CREATE OR REPLACE FUNCTION {schema}.enqueue(
    task text, payload bytea, key_digest bytea DEFAULT NULL, key_preview text DEFAULT NULL,
    scope text DEFAULT 'default', options jsonb DEFAULT '{}')
RETURNS TABLE (job_id bigint, outcome text, accepted jsonb)
-- Sequential scans off: see enqueue_keyed.sql.
LANGUAGE plpgsql SET enable_seqscan = off AS $$
#variable_conflict use_variable
DECLARE
    v_unknown text;
    v_mistyped text;
    v_retry jsonb;
    v_run_at timestamptz;
    v_tag_list text[];
    v_placed record;
    -- One per field of the request, named v_<field>; those this function does not set stay
    -- NULL, as a field added to the request after this API was written.
    {request_declarations:v_}
    -- 36500 days, the longest duration a job keeps.
    c_max_ms constant bigint := 3153600000000;
BEGIN
    options := coalesce(options, '{}');
    PERFORM {schema}.require(jsonb_typeof(options) = 'object', 'options must be a JSON object');
    SELECT string_agg(k, ', ') INTO v_unknown
      FROM (SELECT k FROM jsonb_object_keys(options) k
             WHERE k NOT IN ('queue', 'priority', 'runAt', 'delayMs', 'maxAttempts',
                             'retryPolicy', 'timeoutMs', 'tags', 'keyRetentionMs')
            UNION ALL
            SELECT 'retryPolicy.' || k
              FROM jsonb_object_keys(CASE jsonb_typeof(options -> 'retryPolicy')
                                     WHEN 'object' THEN options -> 'retryPolicy' END) k
             WHERE k NOT IN ('initialMs', 'maxMs', 'multiplier', 'jitter')) u;
    PERFORM {schema}.require(v_unknown IS NULL, format('unknown option(s) %s', v_unknown));

    -- Types are checked before any cast, so that a value of the wrong type is refused by name
    -- rather than failing a cast. JSON null counts as absent.
    SELECT string_agg(format('%s (%s)', o.name, o.expected), ', ') INTO v_mistyped
      FROM (VALUES
              ('queue', options -> 'queue', 'text', 'a string'),
              ('priority', options -> 'priority', 'int', 'a whole number of 32 bits'),
              ('runAt', options -> 'runAt', 'timestamp',
               'an ISO 8601 timestamp with its offset, e.g. "2026-12-01T09:00:00Z"'),
              ('delayMs', options -> 'delayMs', 'bigint', 'a whole number'),
              ('maxAttempts', options -> 'maxAttempts', 'int', 'a whole number of 32 bits'),
              ('retryPolicy', options -> 'retryPolicy', 'object', 'an object'),
              ('retryPolicy.initialMs', options #> '{retryPolicy,initialMs}', 'bigint',
               'a whole number'),
              ('retryPolicy.maxMs', options #> '{retryPolicy,maxMs}', 'bigint', 'a whole number'),
              ('retryPolicy.multiplier', options #> '{retryPolicy,multiplier}', 'number',
               'a number'),
              ('retryPolicy.jitter', options #> '{retryPolicy,jitter}', 'number', 'a number'),
              ('timeoutMs', options -> 'timeoutMs', 'bigint', 'a whole number'),
              ('tags', options -> 'tags', 'texts', 'an array of strings'),
              ('keyRetentionMs', options -> 'keyRetentionMs', 'bigint', 'a whole number'))
           AS o(name, value, kind, expected)
     WHERE jsonb_typeof(o.value) <> 'null'
       AND NOT CASE o.kind
           WHEN 'text' THEN jsonb_typeof(o.value) = 'string'
           -- The offset is required: without one the session's time zone would silently apply.
           WHEN 'timestamp' THEN jsonb_typeof(o.value) = 'string' AND o.value #>> '{}' ~
               '^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d(:\d\d(\.\d+)?)?([Zz]|[+-]\d\d(:?\d\d)?)$'
           WHEN 'object' THEN jsonb_typeof(o.value) = 'object'
           WHEN 'number' THEN jsonb_typeof(o.value) = 'number'
           WHEN 'int' THEN jsonb_typeof(o.value) = 'number'
               AND o.value::numeric = trunc(o.value::numeric)
               AND o.value::numeric BETWEEN -2147483648 AND 2147483647
           WHEN 'bigint' THEN jsonb_typeof(o.value) = 'number'
               AND o.value::numeric = trunc(o.value::numeric)
               AND o.value::numeric BETWEEN -9223372036854775808 AND 9223372036854775807
           WHEN 'texts' THEN jsonb_typeof(o.value) = 'array' AND NOT EXISTS (
               SELECT FROM jsonb_array_elements(o.value) t WHERE jsonb_typeof(t) <> 'string')
           END;
    PERFORM {schema}.require(v_mistyped IS NULL,
        format('option(s) of the wrong type: %s', v_mistyped));
    IF options ->> 'runAt' IS NOT NULL THEN
        BEGIN
            v_run_at := (options ->> 'runAt')::timestamptz;
        EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format THEN
            PERFORM {schema}.require(false,
                format('runAt %s is not a valid timestamp', options -> 'runAt'));
        END;
        PERFORM {schema}.require(
            v_run_at BETWEEN '0001-01-01T00:00:00Z' AND '9999-12-31T23:59:59.999999Z',
            'runAt must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z');
        -- Exactly, on PostgreSQL 13 too (see job_columns.sql).
        v_run_at_micros := extract(epoch FROM date_trunc('minute', v_run_at AT TIME ZONE 'UTC'))::bigint * 1000000
                           + extract(microseconds FROM v_run_at AT TIME ZONE 'UTC')::bigint;
    END IF;

    -- Whole numbers go through numeric: 20.0 and 2e1 are 20 too.
    v_retry := coalesce(options -> 'retryPolicy', '{}');
    v_queue := coalesce(options ->> 'queue', 'default');
    v_delay_ms := (options ->> 'delayMs')::numeric::bigint;
    v_max_attempts := coalesce((options ->> 'maxAttempts')::numeric::integer, 20);
    v_retry_initial_ms := coalesce((v_retry ->> 'initialMs')::numeric::bigint, 1000);
    v_retry_max_ms := coalesce((v_retry ->> 'maxMs')::numeric::bigint, 3600000);
    v_retry_multiplier := coalesce((v_retry ->> 'multiplier')::double precision, 2.0);
    v_retry_jitter := coalesce((v_retry ->> 'jitter')::double precision, 0.1);
    v_timeout_ms := (options ->> 'timeoutMs')::numeric::bigint;
    v_key_retention_ms := (options ->> 'keyRetentionMs')::numeric::bigint;
    v_tag_list := ARRAY(SELECT jsonb_array_elements_text(coalesce(options -> 'tags', '[]')));
    PERFORM {schema}.require(octet_length(task) BETWEEN 1 AND 255, 'task must be 1 to 255 bytes');
    PERFORM {schema}.require(payload IS NOT NULL, 'payload must not be null');
    PERFORM {schema}.require((key_digest IS NULL) = (key_preview IS NULL),
        'key_digest and key_preview go together');
    PERFORM {schema}.require(key_digest IS NULL OR octet_length(key_digest) = 32,
        'key_digest must be the 32 bytes of a SHA-256');
    PERFORM {schema}.require(key_preview IS NULL OR char_length(key_preview) <= 32,
        'key_preview must be at most 32 characters, and never the whole key');
    PERFORM {schema}.require(octet_length(v_queue) BETWEEN 1 AND 128
        AND octet_length(scope) BETWEEN 1 AND 128
        AND NOT EXISTS (SELECT 1 FROM unnest(v_tag_list) t WHERE octet_length(t) NOT BETWEEN 1 AND 128),
        'queue, scope and each tag must be 1 to 128 bytes');
    PERFORM {schema}.require(v_run_at IS NULL OR v_delay_ms IS NULL, 'runAt and delayMs exclude each other');
    PERFORM {schema}.require(v_max_attempts >= 1, 'maxAttempts must be at least 1');
    PERFORM {schema}.require(coalesce(v_delay_ms, 0) BETWEEN 0 AND c_max_ms
        AND coalesce(v_key_retention_ms, 0) BETWEEN 0 AND c_max_ms
        AND coalesce(v_timeout_ms, 1) BETWEEN 1 AND c_max_ms,
        'delayMs and keyRetentionMs must be 0 to 36500 days, timeoutMs 1 ms to 36500 days');
    PERFORM {schema}.require(v_retry_initial_ms BETWEEN 0 AND v_retry_max_ms AND v_retry_max_ms <= c_max_ms
        AND v_retry_multiplier >= 1 AND v_retry_multiplier < 'infinity' AND v_retry_jitter BETWEEN 0 AND 1,
        'retryPolicy needs 0 <= initialMs <= maxMs <= 36500 days, multiplier >= 1, jitter 0 to 1');

    v_task := task;
    v_payload := payload;
    v_scope := scope;
    v_key_digest := key_digest;
    v_key_preview := key_preview;
    v_priority := coalesce((options ->> 'priority')::numeric::integer, 0);
    -- Stored as every binding stores tags: sorted by their bytes, each once.
    v_tags := (SELECT coalesce(jsonb_agg(t ORDER BY t COLLATE "C"), '[]')
                 FROM (SELECT DISTINCT t FROM unnest(v_tag_list) t) d);
    SELECT e.job_id, e.created, e.conflict INTO v_placed
      -- Announced within the caller's transaction: PostgreSQL delivers it at commit.
      FROM {schema}.enqueue_keyed({request_args:ARRAY[v_*]}, ARRAY[1], true) e;
    RETURN QUERY
    SELECT v_placed.job_id,
           CASE WHEN v_placed.conflict IS NOT NULL THEN 'conflict'
                WHEN v_placed.created THEN 'accepted'
                ELSE 'replayed' END,
           v_placed.conflict -> 'accepted';
END
$$;
