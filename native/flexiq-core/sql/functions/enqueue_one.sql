-- One keyed job, the common case (enqueue_keyed takes batches). The arguments are
-- enqueue_keyed's, with one element each, so that bindings build them alike.
--
-- PL/pgSQL rather than one statement with CTEs: PostgreSQL prepares every part of a statement
-- before running any, an INSERT with its indexes included, even when no row reaches it. Here a
-- replay (a key held by an equivalent live request) runs only its index lookup and writes
-- nothing, so its commit waits on no disk. A free key is taken by one INSERT … ON CONFLICT DO
-- NOTHING; the unique index decides. Whatever else can happen goes to enqueue_keyed: a holder
-- that asks differently (the conflict comes back as data), a holder whose retention has
-- closed, and a holder that a racing transaction committed after the lookup, which ON CONFLICT
-- waits for and enqueue_keyed then reads with a fresh snapshot.
--
-- p_announce: whether a new job due now is announced here, so that PostgreSQL delivers the
-- wake-up when the caller's transaction commits. FlexiQ's own connections announce after the
-- commit instead (announce.sql), but for a single enqueue that no other overlaps: a NOTIFY in
-- the enqueueing transaction would make concurrent commits wait for each other's disk flush.
-- Earlier versions took no p_flow, then no payload codec; a different parameter list would
-- make a second function.
DROP FUNCTION IF EXISTS {schema}.enqueue_one(bytea[], text[], text[], integer[], bigint[], bigint[], integer[],
    bigint[], bigint[], double precision[], double precision[], bigint[], jsonb[], bigint[],
    text[], bytea[], text[], integer[], boolean);
DROP FUNCTION IF EXISTS {schema}.enqueue_one(bytea[], text[], text[], integer[], bigint[],
    bigint[], integer[], bigint[], bigint[], double precision[], double precision[], bigint[],
    jsonb[], bigint[], jsonb[], text[], bytea[], text[], integer[], boolean);

CREATE OR REPLACE FUNCTION {schema}.enqueue_one(
    p_payload bytea[], p_queue text[], p_task text[], p_priority integer[],
    p_run_at_micros bigint[], p_delay_ms bigint[], p_max_attempts integer[],
    p_retry_initial_ms bigint[], p_retry_max_ms bigint[], p_retry_multiplier double precision[],
    p_retry_jitter double precision[], p_timeout_ms bigint[], p_tags jsonb[],
    p_key_retention_ms bigint[], p_flow jsonb[], p_payload_codec text[],
    p_payload_digest bytea[], p_scope text[], p_key_digest bytea[], p_key_preview text[],
    p_id_rank integer[], p_announce boolean)
RETURNS TABLE (job_id bigint, created boolean, conflict jsonb)
-- Sequential scans off: see enqueue_keyed.sql.
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
    v_id bigint;
    v_usable boolean;
BEGIN
    SELECT j.id,
           (j.held_until IS NULL OR j.held_until > now())
           AND (j.queue, j.task, {schema}.payload_fingerprint(j.payload, j.payload_digest), j.priority, j.requested_run_at,
                j.requested_delay_ms, j.max_attempts, j.retry_initial_ms, j.retry_max_ms,
                j.retry_multiplier, j.retry_jitter, j.timeout_ms, j.tags, j.key_retention_ms,
                j.flow)
               IS NOT DISTINCT FROM
               (p_queue[1], p_task[1], {schema}.payload_fingerprint(p_payload[1], p_payload_digest[1]),
                p_priority[1],
                {schema}.micros_to_timestamptz(p_run_at_micros[1]), p_delay_ms[1],
                p_max_attempts[1], p_retry_initial_ms[1], p_retry_max_ms[1],
                p_retry_multiplier[1], p_retry_jitter[1], p_timeout_ms[1], p_tags[1],
                p_key_retention_ms[1], p_flow[1])
      INTO v_id, v_usable
      FROM {schema}.jobs j
     WHERE j.key_held AND j.key_scope = p_scope[1] AND j.key_digest = p_key_digest[1];
    IF v_usable THEN
        RETURN QUERY SELECT v_id, false, NULL::jsonb;
        RETURN;
    END IF;

    IF v_id IS NULL THEN
        v_id := {schema}.insert_keyed(p_payload, p_queue, p_task, p_priority, p_run_at_micros,
                    p_delay_ms, p_max_attempts, p_retry_initial_ms, p_retry_max_ms,
                    p_retry_multiplier, p_retry_jitter, p_timeout_ms, p_tags, p_key_retention_ms,
                    p_flow, p_payload_codec, p_payload_digest, p_scope, p_key_digest, p_key_preview,
                    p_announce);
        IF v_id IS NOT NULL THEN
            RETURN QUERY SELECT v_id, true, NULL::jsonb;
            RETURN;
        END IF;
    END IF;

    -- A single entry: enqueue_keyed returns one row, its job or the conflict.
    SELECT k.job_id, k.created, k.conflict INTO job_id, created, conflict
      FROM {schema}.enqueue_keyed(p_payload, p_queue, p_task, p_priority, p_run_at_micros,
               p_delay_ms, p_max_attempts, p_retry_initial_ms, p_retry_max_ms,
               p_retry_multiplier, p_retry_jitter, p_timeout_ms, p_tags, p_key_retention_ms,
               p_flow, p_payload_codec, p_payload_digest, p_scope, p_key_digest, p_key_preview,
               p_id_rank) k;
    -- A job taken over from a closed holder may not be due yet; waking a worker for it only
    -- costs that worker a look.
    IF p_announce AND created THEN
        PERFORM {schema}.announce(p_queue);
    END IF;
    RETURN NEXT;
END
$$;
