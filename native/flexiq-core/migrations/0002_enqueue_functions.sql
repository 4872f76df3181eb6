-- Enqueue. Every job is described by its payload and a request object: the fields a replay is
-- compared on (queue, task, payload digest, priority, runAt or delay, maxAttempts, retryPolicy,
-- timeout, tags, keyRetention). Absent options are absent from the object.

-- The row of a new job. Inlined into the INSERTs below, it is the one place that maps a
-- request to columns.
CREATE FUNCTION {schema}.job_row(
    p_id bigint, p_payload bytea, p_request jsonb, p_scope text, p_key_digest bytea, p_key_preview text)
RETURNS SETOF {schema}.jobs
LANGUAGE sql STABLE AS $$
    SELECT p_id,
           p_request->>'queue',
           p_request->>'task',
           p_payload,
           CASE WHEN due.at > now() THEN 'scheduled' ELSE 'available' END,
           (p_request->>'priority')::integer,
           due.at,
           0,
           (p_request->>'maxAttempts')::integer,
           (p_request->'retryPolicy'->>'initialMs')::bigint,
           (p_request->'retryPolicy'->>'maxMs')::bigint,
           (p_request->'retryPolicy'->>'multiplier')::double precision,
           (p_request->'retryPolicy'->>'jitter')::double precision,
           (p_request->>'timeoutMs')::bigint,
           p_request->'tags',
           p_scope,
           p_key_digest,
           p_key_preview,
           CASE WHEN p_key_digest IS NOT NULL THEN p_request END,
           p_key_digest IS NOT NULL,
           CASE WHEN p_key_digest IS NOT NULL
                THEN now() + (p_request->>'keyRetentionMs')::bigint * interval '1 millisecond' END,
           NULL::timestamptz,
           now(),
           NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, NULL::text
      FROM (SELECT coalesce(
                timestamptz 'epoch' + (p_request->>'runAtMicros')::bigint * interval '1 microsecond',
                now() + coalesce((p_request->>'delayMs')::bigint, 0) * interval '1 millisecond') AS at) due
$$;

-- Enqueues a batch in which some entries carry a key (digest non-NULL). Returns one row per
-- entry, in input order: the job that holds the entry's key (or the entry's new job) and
-- whether the entry was a replay. Raises SQLSTATE FQ409 with a JSON detail when an entry
-- reuses a key held for a different request (or an earlier entry's key with a different
-- request); the whole batch then writes nothing.
--
-- A replay writes nothing: its INSERT does nothing ON CONFLICT, and the holder is then read in
-- a statement of its own, whose fresh snapshot sees holders committed by racing transactions.
-- If a holder left (its job finished) or its retention expired in between, the entry is tried
-- again; the unique index alone decides who wins.
CREATE FUNCTION {schema}.enqueue_keyed(
    p_payload bytea[], p_request jsonb[], p_scope text[], p_key_digest bytea[], p_key_preview text[])
RETURNS TABLE (job_id bigint, replayed boolean)
LANGUAGE plpgsql AS $$
DECLARE
    v_first integer[];    -- per entry: the first entry using its key (itself when unkeyed)
    v_todo integer[];     -- first entries not yet placed
    v_placed bigint[];    -- rows (first entry, job, 1 if created here else 0)
    v_found bigint[];
    v_conflict record;
    v_round integer := 0;
BEGIN
    SELECT array_agg(e.first_ord ORDER BY e.ord) INTO v_first
      FROM (SELECT t.ord,
                   CASE WHEN t.key_digest IS NULL THEN t.ord
                        ELSE first_value(t.ord) OVER (PARTITION BY t.scope, t.key_digest ORDER BY t.ord)
                   END::integer AS first_ord
              FROM unnest(p_scope, p_key_digest) WITH ORDINALITY AS t(scope, key_digest, ord)) e;

    -- The same key twice in one batch must describe the same request.
    SELECT d.ord, d.first_ord, d.first_request INTO v_conflict
      FROM (SELECT t.ord, t.request,
                   first_value(t.ord) OVER w AS first_ord,
                   first_value(t.request) OVER w AS first_request
              FROM unnest(p_scope, p_key_digest, p_request) WITH ORDINALITY AS t(scope, key_digest, request, ord)
             WHERE t.key_digest IS NOT NULL
            WINDOW w AS (PARTITION BY t.scope, t.key_digest ORDER BY t.ord)) d
     WHERE d.request <> d.first_request
     ORDER BY d.ord
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'FQ409', MESSAGE = 'idempotency conflict',
            DETAIL = jsonb_build_object('index', v_conflict.ord - 1,
                                        'batchIndex', v_conflict.first_ord - 1,
                                        'accepted', v_conflict.first_request)::text;
    END IF;

    v_todo := ARRAY(SELECT t.ord FROM unnest(v_first) WITH ORDINALITY AS t(first_ord, ord)
                     WHERE t.first_ord = t.ord);
    v_placed := '{}';
    WHILE cardinality(v_todo) > 0 LOOP
        v_round := v_round + 1;
        IF v_round > 20 THEN
            RAISE EXCEPTION USING ERRCODE = '40001',
                MESSAGE = 'keys kept changing hands while enqueueing; try again';
        END IF;

        -- Insert the entries still to place, in key order so that racing batches lock alike.
        WITH todo AS (
            SELECT t.*, nextval('{schema}.jobs_id_seq') AS id
              FROM unnest(p_payload, p_request, p_scope, p_key_digest, p_key_preview)
                       WITH ORDINALITY AS t(payload, request, scope, key_digest, key_preview, ord)
              JOIN unnest(v_todo) AS w(ord) ON w.ord = t.ord
        ), inserted AS (
            INSERT INTO {schema}.jobs
            SELECT r.*
              FROM todo, {schema}.job_row(todo.id, todo.payload, todo.request, todo.scope,
                                          todo.key_digest, todo.key_preview) r
             ORDER BY todo.scope, todo.key_digest
                ON CONFLICT (key_scope, key_digest) WHERE key_held DO NOTHING
            RETURNING id
        )
        SELECT v_placed || coalesce(array_agg(ARRAY[todo.ord, todo.id, 1]), '{}'),
               ARRAY(SELECT x.ord FROM todo x WHERE x.id NOT IN (SELECT i.id FROM inserted i))
          INTO v_placed, v_todo
          FROM todo WHERE todo.id IN (SELECT i.id FROM inserted i);

        EXIT WHEN cardinality(v_todo) = 0;

        -- The rest met a holder. Release holders whose retention has closed, so that the next
        -- round takes their keys over; read the others (this statement's snapshot is fresh).
        UPDATE {schema}.jobs j SET key_held = false
          FROM unnest(p_scope, p_key_digest) WITH ORDINALITY AS t(scope, key_digest, ord)
          JOIN unnest(v_todo) AS w(ord) ON w.ord = t.ord
         WHERE j.key_held AND j.held_until <= now()
           AND j.key_scope = t.scope AND j.key_digest = t.key_digest;

        SELECT coalesce(array_agg(ARRAY[t.ord, j.id, 0]), '{}') INTO v_found
          FROM unnest(p_scope, p_key_digest) WITH ORDINALITY AS t(scope, key_digest, ord)
          JOIN unnest(v_todo) AS w(ord) ON w.ord = t.ord
          JOIN {schema}.jobs j ON j.key_held AND j.key_scope = t.scope AND j.key_digest = t.key_digest;
        v_placed := v_placed || v_found;
        -- A holder that left in between is not found: its entry goes round again.
        v_todo := ARRAY(SELECT w FROM unnest(v_todo) w
                         WHERE w NOT IN (SELECT f FROM unnest(v_found[:][1:1]) f));
    END LOOP;

    -- Replays must describe the same request as the one their holder accepted. (OFFSET 0 keeps
    -- the LIMIT from talking the planner into a nested loop over the whole batch.)
    SELECT c.* INTO v_conflict
      FROM (SELECT t.ord, j.id, j.request
              FROM unnest(p_request, v_first) WITH ORDINALITY AS t(request, first_ord, ord)
              JOIN unnest(v_placed[:][1:1], v_placed[:][2:2], v_placed[:][3:3]) AS p(ord, id, created)
                ON p.ord = t.first_ord
              JOIN {schema}.jobs j ON j.id = p.id
             WHERE p.created = 0 AND j.request <> t.request
            OFFSET 0) c
     ORDER BY c.ord
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'FQ409', MESSAGE = 'idempotency conflict',
            DETAIL = jsonb_build_object('index', v_conflict.ord - 1, 'jobId', v_conflict.id,
                                        'accepted', v_conflict.request)::text;
    END IF;

    RETURN QUERY
    SELECT p.id, NOT (p.created = 1 AND p.ord = t.ord)
      FROM unnest(v_first) WITH ORDINALITY AS t(first_ord, ord)
      JOIN unnest(v_placed[:][1:1], v_placed[:][2:2], v_placed[:][3:3]) AS p(ord, id, created)
        ON p.ord = t.first_ord
     ORDER BY t.ord;
END
$$;
