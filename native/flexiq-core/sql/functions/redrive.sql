-- Puts dead-lettered job p_job back to work (due now, its attempts starting over, holding its
-- key again) under a redrive key (p_key_digest) of its own. Returns what happened:
--   redriven   the job is pending again;
--   replayed   this redrive key already redrove this job: nothing changed;
--   key_held   the job's key is held by another active job (holder): nothing changed, for two
--              active jobs never hold one key;
--   not_dead   the job is not dead-lettered (state): nothing changed;
--   not_found  no such job.
-- A redrive key already used for another job raises SQLSTATE FQ410.
CREATE OR REPLACE FUNCTION {schema}.redrive(p_job bigint, p_key_digest bytea, p_key_preview text)
RETURNS TABLE (outcome text, holder bigint, state text)
LANGUAGE plpgsql AS $$
DECLARE
    v_job {schema}.jobs;
    v_prior bigint;
    v_holder bigint;
BEGIN
    SELECT * INTO v_job FROM {schema}.jobs j WHERE j.id = p_job FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'not_found', NULL::bigint, NULL::text;
        RETURN;
    END IF;
    -- Read after taking the row lock: a racing redrive under the same key has committed by now.
    SELECT r.job_id INTO v_prior FROM {schema}.redrives r WHERE r.key_digest = p_key_digest;
    IF FOUND THEN
        IF v_prior <> p_job THEN
            RAISE EXCEPTION USING ERRCODE = 'FQ410',
                MESSAGE = format('redrive key %s was used to redrive job %s', p_key_preview, v_prior);
        END IF;
        RETURN QUERY SELECT 'replayed', NULL::bigint, v_job.state;
        RETURN;
    END IF;
    IF v_job.state <> 'dead' THEN
        RETURN QUERY SELECT 'not_dead', NULL::bigint, v_job.state;
        RETURN;
    END IF;
    BEGIN
        UPDATE {schema}.jobs j
           SET state = 'available', attempt = 0, run_at = now(), started_at = NULL,
               finished_at = NULL, lease_expires_at = NULL, rescued_attempt = NULL,
               key_held = j.key_digest IS NOT NULL, held_until = NULL,
               -- Asked for by an operator: the job runs whatever its deadline said.
               deadline = NULL
         WHERE j.id = p_job;
    EXCEPTION WHEN unique_violation THEN
        -- Another job holds the key (the unique index says so, whatever raced): leave it be.
        SELECT j.id INTO v_holder FROM {schema}.jobs j
         WHERE j.key_held AND j.key_scope = v_job.key_scope AND j.key_digest = v_job.key_digest;
        RETURN QUERY SELECT 'key_held', v_holder, v_job.state;
        RETURN;
    END;
    INSERT INTO {schema}.redrives (key_digest, key_preview, job_id, redriven_at)
    VALUES (p_key_digest, p_key_preview, p_job, now());
    PERFORM {schema}.announce(ARRAY[v_job.queue]);
    RETURN QUERY SELECT 'redriven', NULL::bigint, 'available'::text;
END
$$;
