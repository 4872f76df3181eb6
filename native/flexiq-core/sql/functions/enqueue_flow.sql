-- One debounced or throttled job: p_flow[1] carries debounceMs (with maxWaitMs, optionally) or
-- throttleMs. The arguments are the request's fields, one element each (see enqueue_keyed),
-- and whether a new or replaced job due now is announced here (see insert_jobs.sql).
--
-- Returns the job holding the key, whether this call created it, a conflict as enqueue_keyed
-- returns one, and, for a key that was already held, the decision: 'replaced' (a pending
-- debounced job took this request's payload and options and a new due time), 'coalesced'
-- (a throttled job inside its window absorbed this request), or why a debounce could not
-- replace its holder: 'incompatible_mode' (the key is held another way), 'not_pending' (the
-- job has started) or 'window_elapsed' (maxWait has passed since it was first accepted). Only
-- 'replaced' and a new job write anything.
--
-- The holder is locked while it is decided on, so a replacement and a worker's claim take
-- turns: the replacement lands before the claim, or sees the job running and says so.
--
-- SECURITY DEFINER: a replacement updates a job's request and state, which a producer role may
-- not do to jobs in general (grant_producer.sql); here it can only do so to the pending job
-- holding its own debounce key. The search path is fixed, as for any such function.
CREATE OR REPLACE FUNCTION {schema}.enqueue_flow({request_signature}, p_announce boolean)
RETURNS TABLE (job_id bigint, created boolean, conflict jsonb, decision text)
-- Sequential scans off: see enqueue_keyed.sql.
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    SET enable_seqscan = off AS $$
DECLARE
    v_flow jsonb := p_flow[1];
    v_holder {schema}.jobs;
    v_id bigint;
    v_state text;
    v_at timestamptz;
    v_round integer := 0;
BEGIN
    LOOP
        v_round := v_round + 1;
        IF v_round > 20 THEN
            RAISE EXCEPTION USING ERRCODE = '40001',
                MESSAGE = 'the key kept changing hands while enqueueing; try again';
        END IF;
        SELECT * INTO v_holder
          FROM {schema}.jobs j
         WHERE j.key_held AND j.key_scope = p_scope[1] AND j.key_digest = p_key_digest[1]
           FOR UPDATE;
        IF NOT FOUND THEN
            v_id := {schema}.insert_keyed({request_args:p_}, p_announce);
            IF v_id IS NOT NULL THEN
                RETURN QUERY SELECT v_id, true, NULL::jsonb, NULL::text;
                RETURN;
            END IF;
            -- A racing call took the key after the lookup (ON CONFLICT waited for it to
            -- commit): the next round decides against its job.
            CONTINUE;
        END IF;
        -- A closed window (a throttle's, or a finished job's retention) frees the key.
        IF v_holder.held_until <= now() THEN
            UPDATE {schema}.jobs SET key_held = false WHERE id = v_holder.id;
            CONTINUE;
        END IF;
        EXIT;
    END LOOP;

    IF v_flow ? 'throttleMs' THEN
        IF coalesce(v_holder.flow ? 'throttleMs', false) THEN
            RETURN QUERY SELECT v_holder.id, false, NULL::jsonb, 'coalesced'::text;
            RETURN;
        END IF;
        -- A key held another way is held for a different request.
        RETURN QUERY SELECT v_holder.id, false,
            jsonb_build_object('index', 0, 'accepted', {schema}.request_of(v_holder)), NULL::text;
        RETURN;
    END IF;

    IF NOT coalesce(v_holder.flow ? 'debounceMs', false) THEN
        RETURN QUERY SELECT v_holder.id, false, NULL::jsonb, 'incompatible_mode'::text;
    ELSIF v_holder.state NOT IN ('available', 'scheduled') THEN
        RETURN QUERY SELECT v_holder.id, false, NULL::jsonb, 'not_pending'::text;
    ELSIF v_holder.created_at + (v_flow ->> 'maxWaitMs')::bigint * interval '1 millisecond'
          <= now() THEN
        RETURN QUERY SELECT v_holder.id, false, NULL::jsonb, 'window_elapsed'::text;
    ELSE
        -- least() passes over a NULL: without maxWait the period alone decides.
        v_at := least(now() + (v_flow ->> 'debounceMs')::bigint * interval '1 millisecond',
                      v_holder.created_at
                          + (v_flow ->> 'maxWaitMs')::bigint * interval '1 millisecond');
        UPDATE {schema}.jobs j
           SET {stored_assignments:p_*[1]},
               deadline = {schema}.micros_to_timestamptz((v_flow ->> 'deadlineMicros')::bigint),
               concurrency_key = v_flow ->> 'concurrencyKey',
               concurrency_limit = (v_flow ->> 'concurrencyLimit')::integer,
               run_at = v_at,
               state = CASE WHEN v_at > now() THEN 'scheduled' ELSE 'available' END
         WHERE j.id = v_holder.id
        RETURNING j.state INTO v_state;
        IF p_announce AND v_state = 'available' THEN
            PERFORM {schema}.announce(p_queue);
        END IF;
        RETURN QUERY SELECT v_holder.id, false, NULL::jsonb, 'replaced'::text;
    END IF;
END
$$;

-- Only the roles granted as producers (grant_producer.sql) may call it.
REVOKE EXECUTE ON FUNCTION {schema}.enqueue_flow({request_types}, boolean) FROM PUBLIC;
