-- Enqueue. Every job is described by its payload and a request object (the fields a replay is
-- compared on: queue, task, payload digest, priority, runAt or delay, maxAttempts, retryPolicy,
-- timeout, tags, keyRetention). Absent options are absent from the object.

-- Inserts jobs from parallel arrays. p_ids, when given, holds for each entry the id allocated
-- for it, or NULL to skip the entry; NULL inserts every entry with a fresh id (the unkeyed path).
CREATE FUNCTION {schema}.insert_jobs(
    p_ids bigint[],
    p_payload bytea[], p_request jsonb[], p_scope text[], p_key_digest bytea[], p_key_preview text[])
RETURNS SETOF bigint
LANGUAGE sql AS $$
    INSERT INTO {schema}.jobs (id, queue, task, payload, state, priority, run_at, max_attempts,
                               retry_initial_ms, retry_max_ms, retry_multiplier, retry_jitter,
                               timeout_ms, tags, key_scope, key_digest, key_preview)
    SELECT coalesce(p_ids[t.ord], nextval('{schema}.jobs_id_seq')),
           t.request->>'queue',
           t.request->>'task',
           t.payload,
           CASE WHEN due.at > now() THEN 'scheduled' ELSE 'available' END,
           (t.request->>'priority')::integer,
           due.at,
           (t.request->>'maxAttempts')::integer,
           (t.request->'retryPolicy'->>'initialMs')::bigint,
           (t.request->'retryPolicy'->>'maxMs')::bigint,
           (t.request->'retryPolicy'->>'multiplier')::double precision,
           (t.request->'retryPolicy'->>'jitter')::double precision,
           (t.request->>'timeoutMs')::bigint,
           t.request->'tags',
           t.scope, t.key_digest, t.key_preview
      FROM unnest(p_payload, p_request, p_scope, p_key_digest, p_key_preview)
               WITH ORDINALITY AS t(payload, request, scope, key_digest, key_preview, ord)
     CROSS JOIN LATERAL (SELECT coalesce(
               timestamptz 'epoch' + (t.request->>'runAtMicros')::bigint * interval '1 microsecond',
               now() + coalesce((t.request->>'delayMs')::bigint, 0) * interval '1 millisecond') AS at) due
     WHERE p_ids IS NULL OR p_ids[t.ord] IS NOT NULL
     ORDER BY t.ord
    RETURNING id
$$;

-- Enqueues a batch in which some entries carry a key (digest non-NULL). Returns one row per
-- entry, in input order: the job id that holds the entry's key (or the new job's id) and
-- whether the entry was a replay. Raises SQLSTATE FQ409 with a JSON detail when an entry
-- reuses a bound key (or an earlier entry's key) with a different request; the whole batch
-- then writes nothing.
--
-- Why a function: a replay must report the job that holds the key even when that job was
-- accepted by a transaction that committed after this statement's snapshot was taken. The
-- ON CONFLICT clause locks every conflicting binding, and the statement after it, with a fresh
-- snapshot, reads those locked (so stable) bindings. One call is still one round trip.
CREATE FUNCTION {schema}.enqueue_keyed(
    p_payload bytea[], p_request jsonb[], p_scope text[], p_key_digest bytea[], p_key_preview text[])
RETURNS TABLE (job_id bigint, replayed boolean)
LANGUAGE plpgsql
-- Batches range from one entry to thousands: a plan cached for one size must not serve the other.
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
    v_ids bigint[];       -- per entry: the id of the job it creates, or NULL
    v_new bigint[];       -- the ids of the jobs this call creates
    v_conflict record;
BEGIN
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

    -- Bind the first entry of every key, in key order so that concurrent batches lock alike.
    -- A binding is taken over only once its job has left the active states and its retention
    -- has passed (held_until <= now()); otherwise the existing row stays and is locked.
    WITH entries AS (
        SELECT t.scope, t.key_digest, t.request, t.key_preview, t.ord
          FROM unnest(p_scope, p_key_digest, p_request, p_key_preview)
                   WITH ORDINALITY AS t(scope, key_digest, request, key_preview, ord)
    ), candidates AS (
        SELECT c.*, nextval('{schema}.jobs_id_seq') AS new_id
          FROM (SELECT DISTINCT ON (e.scope, e.key_digest) e.*
                  FROM entries e WHERE e.key_digest IS NOT NULL
                 ORDER BY e.scope, e.key_digest, e.ord) c
    ), bound AS (
        INSERT INTO {schema}.job_keys AS k
               (scope, key_digest, job_id, request, key_preview, accepted_at, retain_until)
        SELECT c.scope, c.key_digest, c.new_id, c.request, c.key_preview, now(),
               now() + (c.request->>'keyRetentionMs')::bigint * interval '1 millisecond'
          FROM candidates c
         ORDER BY c.scope, c.key_digest
            ON CONFLICT (scope, key_digest) DO UPDATE
           SET job_id = EXCLUDED.job_id, request = EXCLUDED.request,
               key_preview = EXCLUDED.key_preview, accepted_at = EXCLUDED.accepted_at,
               retain_until = EXCLUDED.retain_until, held_until = NULL
         WHERE k.held_until <= now()
        RETURNING k.job_id
    ), accepted AS (
        SELECT c.ord, c.new_id FROM candidates c WHERE c.new_id IN (SELECT b.job_id FROM bound b)
        UNION ALL
        SELECT e.ord, nextval('{schema}.jobs_id_seq') FROM entries e WHERE e.key_digest IS NULL
    )
    SELECT array_agg(a.new_id ORDER BY e.ord), array_agg(a.new_id) FILTER (WHERE a.new_id IS NOT NULL)
      INTO v_ids, v_new
      FROM entries e LEFT JOIN accepted a ON a.ord = e.ord;

    -- Replays of bound keys must describe the same request as the accepted one.
    SELECT t.ord, k.job_id, k.request INTO v_conflict
      FROM unnest(p_scope, p_key_digest, p_request) WITH ORDINALITY AS t(scope, key_digest, request, ord)
      JOIN {schema}.job_keys k ON k.scope = t.scope AND k.key_digest = t.key_digest
     WHERE k.request <> t.request AND NOT (k.job_id = ANY (coalesce(v_new, '{}')))
     ORDER BY t.ord
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'FQ409', MESSAGE = 'idempotency conflict',
            DETAIL = jsonb_build_object('index', v_conflict.ord - 1, 'jobId', v_conflict.job_id,
                                        'accepted', v_conflict.request)::text;
    END IF;

    IF v_new IS NOT NULL THEN
        PERFORM {schema}.insert_jobs(v_ids, p_payload, p_request, p_scope, p_key_digest, p_key_preview);
    END IF;

    -- Each entry: its own new job, else the new job of the key's first entry, else the job
    -- holding the key (a primary-key lookup, made only for replays).
    RETURN QUERY
    SELECT coalesce(v_ids[e.ord],
                    v_ids[e.first_ord],
                    (SELECT k.job_id FROM {schema}.job_keys k
                      WHERE k.scope = e.scope AND k.key_digest = e.key_digest)),
           v_ids[e.ord] IS NULL
      FROM (SELECT t.scope, t.key_digest, t.ord,
                   first_value(t.ord) OVER (PARTITION BY t.scope, t.key_digest ORDER BY t.ord) AS first_ord
              FROM unnest(p_scope, p_key_digest) WITH ORDINALITY AS t(scope, key_digest, ord)) e
     ORDER BY e.ord;
END
$$;
