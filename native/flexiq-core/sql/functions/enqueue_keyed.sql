-- Enqueue. A batch arrives as one array per field of the request (request/fields.rs in the
-- core declares them, and fills the {…} lists), one element per entry; keyed entries also
-- carry their key's scope, digest and preview. A replay is compared on what was asked for:
-- queue, task, payload, priority, runAt or delay, maxAttempts, retry policy, timeout, tags,
-- keyRetention and the flow options (deadline, debounce, throttle).
--
-- A conflict (a key held for a different request) is returned as data, never raised: the
-- statement may run in an application's own transaction, which an error would abort, and
-- PostgreSQL would log every conflict as an ERROR.
--
-- The functions that enqueue (enqueue_keyed, enqueue_flow, enqueue) turn
-- sequential scans off for their own run, as FlexiQ's own connections do for every statement:
-- on an application's connection the session's settings are the application's, and a session
-- that first enqueued while the table was empty planned each lookup of a key's holder as a read
-- of the whole table (free, then) and kept that plan while the table filled, until the table
-- was next analyzed. The setting costs each call a few microseconds.

-- enqueue_one answered single keyed jobs before this function took them over.
DROP FUNCTION IF EXISTS {schema}.enqueue_one;

-- Places the entries of a batch in which some carry a key (digest non-NULL). The binding sends
-- each key once, keyed entries in (scope, digest) order so that racing batches lock alike,
-- and p_id_rank: each entry's position in the caller's order, so that ids follow it.
-- Returns, per entry in array order, the job that holds its key (or its new job) and whether
-- this call created that job. When a key is held for a different request it returns one row
-- instead: the holder, with conflict = {index, accepted}; jobs it created for other entries
-- are then still there, and enqueue_keyed undoes them.
--
-- A replay writes nothing: its INSERT does nothing ON CONFLICT, and the holder is then read in
-- a statement of its own, whose fresh snapshot sees holders committed by racing transactions.
-- If a holder left (its job finished) or its retention expired in between, the entry is tried
-- again; the unique index alone decides who wins.
CREATE OR REPLACE FUNCTION {schema}.place_jobs({request_signature}, p_id_rank integer[])
RETURNS TABLE (job_id bigint, created boolean, conflict jsonb)
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
            INSERT INTO {schema}.jobs ({new_job_columns})
            SELECT n.*
              FROM {schema}.new_jobs(v_id, {request_args:p_}) n
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
            RETURN QUERY SELECT unnest(v_id), true, NULL::jsonb;
            RETURN;
        END IF;
        EXIT WHEN cardinality(v_todo) = 0;

        -- The rest met a holder. Release holders whose retention has closed, so that the next
        -- round takes their keys over; read the others (this statement's snapshot is fresh).
        -- Each holder is looked up on its own (OFFSET 0), so that its key reaches the index as
        -- a parameter whatever the statistics say; a join may read every held key.
        UPDATE {schema}.jobs j SET key_held = false
         WHERE j.id IN (SELECT h.id
                          FROM unnest(v_id, p_scope, p_key_digest) AS t(id, scope, key_digest),
                               LATERAL (SELECT x.id FROM {schema}.jobs x
                                         WHERE x.key_held AND x.key_scope = t.scope
                                           AND x.key_digest = t.key_digest
                                        OFFSET 0) h
                         WHERE t.id IN (SELECT unnest(v_todo)))
           AND j.key_held AND j.held_until <= now();

        SELECT coalesce(array_agg(ARRAY[t.id, h.id, 0]), '{}') INTO v_found
          FROM unnest(v_id, p_scope, p_key_digest) AS t(id, scope, key_digest),
               LATERAL (SELECT x.id FROM {schema}.jobs x
                         WHERE x.key_held AND x.key_scope = t.scope
                           AND x.key_digest = t.key_digest
                        OFFSET 0) h
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
              FROM unnest(v_id, {request_args:p_})
                       WITH ORDINALITY AS t(id, {request_names}, ord)
              JOIN unnest(v_placed[:][1:1], v_placed[:][2:2], v_placed[:][3:3])
                       AS p(entry, id, created) ON p.entry = t.id
              JOIN {schema}.jobs j ON j.id = p.id
             WHERE p.created = 0
               AND ({schema}.payload_fingerprint(j.payload, j.payload_digest),
                    {compared_stored:j.})
                   IS DISTINCT FROM
                   ({schema}.payload_fingerprint(t.payload, t.payload_digest),
                    {compared_requested:t.})
            OFFSET 0) c
     ORDER BY c.ord
     LIMIT 1;
    IF FOUND THEN
        RETURN QUERY
        SELECT j.id, false, jsonb_build_object('index', v_conflict.ord - 1,
                                               'accepted', {schema}.request_of(j))
          FROM {schema}.jobs j WHERE j.id = v_conflict.id;
        RETURN;
    END IF;

    RETURN QUERY
    SELECT p.id, p.created = 1, NULL::jsonb
      FROM unnest(v_id) WITH ORDINALITY AS t(id, ord)
      JOIN unnest(v_placed[:][1:1], v_placed[:][2:2], v_placed[:][3:3]) AS p(entry, id, created)
        ON p.entry = t.id
     ORDER BY t.ord;
END
$$;

-- Enqueues a batch (see place_jobs) and returns its rows; when the batch meets a conflict it
-- writes nothing and returns only the conflict's row. A batch of one cannot have created a job
-- when it conflicts; a larger one is placed in a block whose exception undoes what it created
-- (a subtransaction; the exception is caught, so nothing reaches the caller or the log).
--
-- One entry, the common case, is looked up first: PostgreSQL prepares every part of a
-- statement before running any, an INSERT with its indexes included, even when no row reaches
-- it, so here a replay (a key held by an equivalent live request) runs only its index lookup,
-- draws no id and writes nothing, and its commit waits on no disk. A free key is taken by one
-- INSERT … ON CONFLICT DO NOTHING (insert_keyed); the unique index decides. Whatever else can
-- happen goes to place_jobs: a holder that asks differently (the conflict comes back as data),
-- a holder whose retention has closed, and a holder that a racing transaction committed after
-- the lookup, which ON CONFLICT waits for and place_jobs then reads with a fresh snapshot.
--
-- p_announce: whether the queues of new jobs due now are announced here, so that PostgreSQL
-- delivers the wake-up when the caller's transaction commits (see insert_jobs.sql). Here and
-- not in the calling statement, whose extra plan would cost a lone call a fifth of its time.
-- Earlier versions took no p_announce; schema.rs drops the overload this one supersedes.
CREATE OR REPLACE FUNCTION {schema}.enqueue_keyed({request_signature}, p_id_rank integer[],
                                                  p_announce boolean)
RETURNS TABLE (job_id bigint, created boolean, conflict jsonb)
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
    v_job bigint[];
    v_created boolean[];
    v_conflict jsonb[];
    v_id bigint;
    v_usable boolean;
BEGIN
    IF cardinality(p_id_rank) = 1 THEN
        SELECT j.id,
               (j.held_until IS NULL OR j.held_until > now())
               AND {schema}.payload_fingerprint(j.payload, j.payload_digest)
                   = {schema}.payload_fingerprint(p_payload[1], p_payload_digest[1])
               AND ({compared_stored:j.}) IS NOT DISTINCT FROM ({compared_requested:p_*[1]})
          INTO v_id, v_usable
          FROM {schema}.jobs j
         WHERE j.key_held AND j.key_scope = p_scope[1] AND j.key_digest = p_key_digest[1];
        IF v_usable THEN
            RETURN QUERY SELECT v_id, false, NULL::jsonb;
            RETURN;
        END IF;
        IF v_id IS NULL THEN
            v_id := {schema}.insert_keyed({request_args:p_}, p_announce);
            IF v_id IS NOT NULL THEN
                RETURN QUERY SELECT v_id, true, NULL::jsonb;
                RETURN;
            END IF;
        END IF;
        SELECT array_agg(p.job_id), array_agg(p.created), array_agg(p.conflict)
          INTO v_job, v_created, v_conflict
          FROM {schema}.place_jobs({request_args:p_}, p_id_rank) p;
    ELSE
        BEGIN
            SELECT array_agg(p.job_id ORDER BY p.ord), array_agg(p.created ORDER BY p.ord),
                   array_agg(p.conflict ORDER BY p.ord)
              INTO v_job, v_created, v_conflict
              FROM {schema}.place_jobs({request_args:p_}, p_id_rank)
                   WITH ORDINALITY AS p(job_id, created, conflict, ord);
            IF v_conflict[1] IS NOT NULL THEN
                -- Rolls the block back; the variables keep the conflict's row.
                RAISE EXCEPTION USING ERRCODE = 'FQ409';
            END IF;
        EXCEPTION WHEN SQLSTATE 'FQ409' THEN
            NULL;
        END;
    END IF;
    -- A conflict's row is the holder's, created by no one: nothing is announced then.
    IF p_announce AND v_conflict[1] IS NULL THEN
        PERFORM {schema}.announce(ARRAY(
            SELECT DISTINCT e.queue
              FROM unnest(p_queue, p_run_at_micros, p_delay_ms, v_created)
                   AS e(queue, run_at_micros, delay_ms, created)
             WHERE e.created AND coalesce(e.delay_ms, 0) = 0
               AND coalesce({schema}.micros_to_timestamptz(e.run_at_micros), now()) <= now()));
    END IF;
    RETURN QUERY SELECT * FROM unnest(v_job, v_created, v_conflict);
END
$$;
