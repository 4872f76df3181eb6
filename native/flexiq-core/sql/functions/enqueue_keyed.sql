-- Enqueue. A batch arrives as one array per job column, one element per entry; keyed entries
-- also carry their key's scope, digest and preview. A replay is compared on what was asked
-- for: queue, task, payload, priority, runAt or delay, maxAttempts, retry policy, timeout,
-- tags and keyRetention.

-- Enqueues a batch in which some entries carry a key (digest non-NULL). The binding sends
-- each key once, keyed entries in (scope, digest) order so that racing batches lock alike,
-- and p_id_rank: each entry's position in the caller's order, so that ids follow it.
-- Returns, per entry in array order, the job that holds its key (or its new job) and whether
-- this call created that job. Raises SQLSTATE FQ409 with a JSON detail when a key is held for
-- a different request; the whole batch then writes nothing.
--
-- A replay writes nothing: its INSERT does nothing ON CONFLICT, and the holder is then read in
-- a statement of its own, whose fresh snapshot sees holders committed by racing transactions.
-- If a holder left (its job finished) or its retention expired in between, the entry is tried
-- again; the unique index alone decides who wins.
CREATE OR REPLACE FUNCTION {schema}.enqueue_keyed(
    p_payload bytea[], p_queue text[], p_task text[], p_priority integer[],
    p_run_at_micros bigint[], p_delay_ms bigint[], p_max_attempts integer[],
    p_retry_initial_ms bigint[], p_retry_max_ms bigint[], p_retry_multiplier double precision[],
    p_retry_jitter double precision[], p_timeout_ms bigint[], p_tags jsonb[],
    p_key_retention_ms bigint[], p_scope text[], p_key_digest bytea[], p_key_preview text[],
    p_id_rank integer[])
RETURNS TABLE (job_id bigint, created boolean)
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint[];        -- per entry: the id its job takes if it is created
    v_todo bigint[];      -- ids of entries not yet placed
    v_placed bigint[];    -- rows (entry id, job, 1 if created here else 0)
    v_found bigint[];
    v_conflict record;
    v_round integer := 0;
BEGIN
    SELECT array_agg(s.ids[r.rank] ORDER BY r.ord) INTO v_id
      FROM (SELECT ARRAY(SELECT nextval('{schema}.jobs_id_seq')
                           FROM generate_series(1, cardinality(p_id_rank))) AS ids) s,
           unnest(p_id_rank) WITH ORDINALITY AS r(rank, ord);
    v_todo := v_id;
    v_placed := '{}';
    WHILE cardinality(v_todo) > 0 LOOP
        v_round := v_round + 1;
        IF v_round > 20 THEN
            RAISE EXCEPTION USING ERRCODE = '40001',
                MESSAGE = 'keys kept changing hands while enqueueing; try again';
        END IF;

        -- Rows come in array order, which is key order.
        WITH inserted AS (
            INSERT INTO {schema}.jobs
            SELECT n.*
              FROM {schema}.new_jobs(v_id, p_payload, p_queue, p_task, p_priority,
                       p_run_at_micros, p_delay_ms, p_max_attempts, p_retry_initial_ms,
                       p_retry_max_ms, p_retry_multiplier, p_retry_jitter, p_timeout_ms, p_tags,
                       p_key_retention_ms, p_scope, p_key_digest, p_key_preview) n
             WHERE v_round = 1 OR n.id IN (SELECT unnest(v_todo))
                ON CONFLICT (key_scope, key_digest) WHERE key_held DO NOTHING
            RETURNING id
        )
        SELECT v_placed || coalesce(array_agg(ARRAY[i.id, i.id, 1]), '{}'),
               ARRAY(SELECT w FROM unnest(v_todo) w
                      WHERE w NOT IN (SELECT x.id FROM inserted x))
          INTO v_placed, v_todo
          FROM inserted i;

        -- Every key was free: nothing was replayed, so nothing can conflict.
        IF v_round = 1 AND cardinality(v_todo) = 0 THEN
            RETURN QUERY SELECT unnest(v_id), true;
            RETURN;
        END IF;
        EXIT WHEN cardinality(v_todo) = 0;

        -- The rest met a holder. Release holders whose retention has closed, so that the next
        -- round takes their keys over; read the others (this statement's snapshot is fresh).
        UPDATE {schema}.jobs j SET key_held = false
          FROM unnest(v_id, p_scope, p_key_digest) AS t(id, scope, key_digest)
         WHERE t.id IN (SELECT unnest(v_todo))
           AND j.key_held AND j.held_until <= now()
           AND j.key_scope = t.scope AND j.key_digest = t.key_digest;

        SELECT coalesce(array_agg(ARRAY[t.id, j.id, 0]), '{}') INTO v_found
          FROM unnest(v_id, p_scope, p_key_digest) AS t(id, scope, key_digest)
          JOIN {schema}.jobs j ON j.key_held AND j.key_scope = t.scope AND j.key_digest = t.key_digest
         WHERE t.id IN (SELECT unnest(v_todo));
        v_placed := v_placed || v_found;
        -- A holder that left in between is not found: its entry goes round again.
        v_todo := ARRAY(SELECT w FROM unnest(v_todo) w
                         WHERE w NOT IN (SELECT f FROM unnest(v_found[:][1:1]) f));
    END LOOP;

    -- Replays must ask for what their holder was accepted with. (OFFSET 0 keeps the LIMIT
    -- from talking the planner into a nested loop over the whole batch.)
    SELECT c.* INTO v_conflict
      FROM (SELECT t.ord, j.id
              FROM unnest(v_id, p_payload, p_queue, p_task, p_priority, p_run_at_micros,
                          p_delay_ms, p_max_attempts, p_retry_initial_ms, p_retry_max_ms,
                          p_retry_multiplier, p_retry_jitter, p_timeout_ms, p_tags,
                          p_key_retention_ms)
                       WITH ORDINALITY AS t(id, payload, queue, task, priority, run_at_micros,
                                            delay_ms, max_attempts, retry_initial_ms,
                                            retry_max_ms, retry_multiplier, retry_jitter,
                                            timeout_ms, tags, key_retention_ms, ord)
              JOIN unnest(v_placed[:][1:1], v_placed[:][2:2], v_placed[:][3:3])
                       AS p(entry, id, created) ON p.entry = t.id
              JOIN {schema}.jobs j ON j.id = p.id
             WHERE p.created = 0
               AND (j.queue, j.task, j.payload, j.priority, j.requested_run_at,
                    j.requested_delay_ms, j.max_attempts, j.retry_initial_ms, j.retry_max_ms,
                    j.retry_multiplier, j.retry_jitter, j.timeout_ms, j.tags, j.key_retention_ms)
                   IS DISTINCT FROM
                   (t.queue, t.task, t.payload, t.priority,
                    {schema}.micros_to_timestamptz(t.run_at_micros),
                    t.delay_ms, t.max_attempts, t.retry_initial_ms, t.retry_max_ms,
                    t.retry_multiplier, t.retry_jitter, t.timeout_ms, t.tags, t.key_retention_ms)
            OFFSET 0) c
     ORDER BY c.ord
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'FQ409', MESSAGE = 'idempotency conflict',
            DETAIL = (SELECT jsonb_build_object('index', v_conflict.ord - 1, 'jobId', j.id,
                                                'accepted', {schema}.request_of(j))::text
                        FROM {schema}.jobs j WHERE j.id = v_conflict.id);
    END IF;

    RETURN QUERY
    SELECT p.id, p.created = 1
      FROM unnest(v_id) WITH ORDINALITY AS t(id, ord)
      JOIN unnest(v_placed[:][1:1], v_placed[:][2:2], v_placed[:][3:3]) AS p(entry, id, created)
        ON p.entry = t.id
     ORDER BY t.ord;
END
$$;
