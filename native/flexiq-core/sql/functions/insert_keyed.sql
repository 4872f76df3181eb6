-- One keyed job, inserted if its key is free: returns the new job's id, or NULL when a holder
-- has the key (ON CONFLICT waited for a racing holder to commit). The arguments are the
-- request's fields, one element each (see enqueue_keyed). p_announce: whether a new job due now
-- is announced here (see insert_jobs.sql). Shared by enqueue_keyed, for one entry, and
-- enqueue_flow.
CREATE OR REPLACE FUNCTION {schema}.insert_keyed({request_signature}, p_announce boolean)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    -- Drawn before new_jobs is called: an argument holding a volatile call would keep
    -- PostgreSQL from inlining the function, and planning it on every call costs more than the
    -- insert.
    v_id bigint := nextval('{schema}.jobs_id_seq');
    v_state text;
BEGIN
    INSERT INTO {schema}.jobs ({new_job_columns})
    SELECT n.* FROM {schema}.new_jobs(ARRAY[v_id], {request_args:p_}) n
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
