-- The producer API for every language: enqueues one job, deduplicated against every binding
-- that uses the same key recipe. Part of FlexiQ's public contract: its name, parameters and
-- result do not change within a major version.
--
-- The caller hashes the key itself: key_digest is the SHA-256 of the key's UTF-8 bytes and
-- key_preview a short, never complete, prefix for operators (FlexiQ's bindings show at most a
-- third of the key, at most 8 characters, then '…'). Without a digest the job has no key.
-- options is a JSON object, every field optional: queue ("default"), priority (0), runAt (a
-- timestamp with time zone, e.g. "2026-12-01T09:00:00Z") or delayMs, maxAttempts (20),
-- retryPolicy {initialMs (1000), maxMs (3600000), multiplier (2.0), jitter (0.1)}, timeoutMs,
-- tags (an array of names) and keyRetentionMs: how long the key stays bound after acceptance
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
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    v_unknown text;
    v_retry jsonb := coalesce(options -> 'retryPolicy', '{}');
    v_queue text := coalesce(options ->> 'queue', 'default');
    v_run_at bigint := (extract(epoch FROM (options ->> 'runAt')::timestamptz) * 1000000)::bigint;
    v_delay_ms bigint := (options ->> 'delayMs')::bigint;
    v_max_attempts integer := coalesce((options ->> 'maxAttempts')::integer, 20);
    v_initial_ms bigint := coalesce((v_retry ->> 'initialMs')::bigint, 1000);
    v_max_ms bigint := coalesce((v_retry ->> 'maxMs')::bigint, 3600000);
    v_multiplier double precision := coalesce((v_retry ->> 'multiplier')::double precision, 2.0);
    v_jitter double precision := coalesce((v_retry ->> 'jitter')::double precision, 0.1);
    v_timeout_ms bigint := (options ->> 'timeoutMs')::bigint;
    v_retention_ms bigint := (options ->> 'keyRetentionMs')::bigint;
    v_tags text[] := ARRAY(SELECT jsonb_array_elements_text(coalesce(options -> 'tags', '[]')));
    -- 36500 days, the longest duration a job keeps.
    c_max_ms constant bigint := 3153600000000;
BEGIN
    SELECT string_agg(k, ', ') INTO v_unknown
      FROM jsonb_object_keys(options) k
     WHERE k NOT IN ('queue', 'priority', 'runAt', 'delayMs', 'maxAttempts', 'retryPolicy',
                     'timeoutMs', 'tags', 'keyRetentionMs');
    PERFORM {schema}.require(v_unknown IS NULL, format('unknown option(s) %s', v_unknown));
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
        AND NOT EXISTS (SELECT 1 FROM unnest(v_tags) t WHERE octet_length(t) NOT BETWEEN 1 AND 128),
        'queue, scope and each tag must be 1 to 128 bytes');
    PERFORM {schema}.require(v_run_at IS NULL OR v_delay_ms IS NULL, 'runAt and delayMs exclude each other');
    PERFORM {schema}.require(v_max_attempts >= 1, 'maxAttempts must be at least 1');
    PERFORM {schema}.require(coalesce(v_delay_ms, 0) BETWEEN 0 AND c_max_ms
        AND coalesce(v_retention_ms, 0) BETWEEN 0 AND c_max_ms
        AND coalesce(v_timeout_ms, 1) BETWEEN 1 AND c_max_ms,
        'delayMs and keyRetentionMs must be 0 to 36500 days, timeoutMs 1 ms to 36500 days');
    PERFORM {schema}.require(v_initial_ms BETWEEN 0 AND v_max_ms AND v_max_ms <= c_max_ms
        AND v_multiplier >= 1 AND v_multiplier < 'infinity' AND v_jitter BETWEEN 0 AND 1,
        'retryPolicy needs 0 <= initialMs <= maxMs <= 36500 days, multiplier >= 1, jitter 0 to 1');

    RETURN QUERY
    SELECT e.job_id,
           CASE WHEN e.conflict IS NOT NULL THEN 'conflict'
                WHEN e.created THEN 'accepted'
                ELSE 'replayed' END,
           e.conflict -> 'accepted'
      FROM {schema}.enqueue_keyed(
               ARRAY[payload], ARRAY[v_queue], ARRAY[task],
               ARRAY[coalesce((options ->> 'priority')::integer, 0)], ARRAY[v_run_at],
               ARRAY[v_delay_ms], ARRAY[v_max_attempts], ARRAY[v_initial_ms], ARRAY[v_max_ms],
               ARRAY[v_multiplier], ARRAY[v_jitter], ARRAY[v_timeout_ms],
               -- Stored as every binding stores tags: sorted by their bytes, each once.
               ARRAY[(SELECT coalesce(jsonb_agg(t ORDER BY t COLLATE "C"), '[]')
                        FROM (SELECT DISTINCT t FROM unnest(v_tags) t) d)],
               ARRAY[v_retention_ms], ARRAY[scope], ARRAY[key_digest], ARRAY[key_preview],
               ARRAY[1]) e;
END
$$;
