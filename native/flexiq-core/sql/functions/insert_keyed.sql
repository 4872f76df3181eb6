-- One keyed job, inserted if its key is free: returns the new job's id, or NULL when a holder
-- has the key (ON CONFLICT waited for a racing holder to commit). The arguments are
-- enqueue_keyed's, with one element each. p_announce: whether a new job due now is announced
-- here (see enqueue_one). Shared by enqueue_one and enqueue_flow.

-- Earlier versions took no payload codec; a different parameter list would make a second
-- function.
DROP FUNCTION IF EXISTS {schema}.insert_keyed(bytea[], text[], text[], integer[], bigint[],
    bigint[], integer[], bigint[], bigint[], double precision[], double precision[], bigint[],
    jsonb[], bigint[], jsonb[], text[], bytea[], text[], boolean);

CREATE OR REPLACE FUNCTION {schema}.insert_keyed(
    p_payload bytea[], p_queue text[], p_task text[], p_priority integer[],
    p_run_at_micros bigint[], p_delay_ms bigint[], p_max_attempts integer[],
    p_retry_initial_ms bigint[], p_retry_max_ms bigint[], p_retry_multiplier double precision[],
    p_retry_jitter double precision[], p_timeout_ms bigint[], p_tags jsonb[],
    p_key_retention_ms bigint[], p_flow jsonb[], p_payload_codec text[],
    p_payload_digest bytea[], p_scope text[], p_key_digest bytea[], p_key_preview text[],
    p_announce boolean)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    -- Drawn before new_jobs is called: an argument holding a volatile call would keep
    -- PostgreSQL from inlining the function, and planning it on every call costs more than the
    -- insert.
    v_id bigint := nextval('{schema}.jobs_id_seq');
    v_state text;
BEGIN
    INSERT INTO {schema}.jobs
    SELECT n.*
      FROM {schema}.new_jobs(ARRAY[v_id], p_payload, p_queue, p_task, p_priority,
               p_run_at_micros, p_delay_ms, p_max_attempts, p_retry_initial_ms,
               p_retry_max_ms, p_retry_multiplier, p_retry_jitter, p_timeout_ms, p_tags,
               p_key_retention_ms, p_flow, p_payload_codec, p_payload_digest, p_scope,
               p_key_digest, p_key_preview) n
        ON CONFLICT (key_scope, key_digest) WHERE key_held DO NOTHING
    RETURNING state INTO v_state;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF p_announce AND v_state = 'available' THEN
        PERFORM {schema}.announce(p_queue);
    END IF;
    RETURN v_id;
END
$$;
