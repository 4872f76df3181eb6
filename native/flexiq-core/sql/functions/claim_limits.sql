-- Which of a claim's candidates their limits let start (claim.sql calls it only when a
-- candidate has a concurrency key or a queue has a rate limit). The candidates come as arrays in
-- claim order: id, queue, concurrency key (or NULL) and its limit. Returns the ids that may
-- start, and records their starts against the rate limits they fall under.
--
-- Each statement here takes a snapshot of its own, after the locks the ones before it took, so
-- it sees every claim that committed before those locks came free:
-- - a key's running jobs are counted under the key's transaction-level advisory lock. A key
--   whose lock another claim holds is passed over (that claim decides for it) rather than
--   waited for; keys share lock numbers only by hash collision, which makes a claim pass over a
--   key now and then, never start one job too many;
-- - a rate limit's row is locked until the claim commits, so claims under one limit take
--   turns; it keeps its latest starts, newest first, at most as many as it allows.
CREATE OR REPLACE FUNCTION {schema}.limit_claim(
    p_ids bigint[], p_queues text[], p_keys text[], p_limits integer[])
RETURNS SETOF bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_locked boolean[];
    v_free bigint[];
    v_limits text[];
    v_chosen bigint[];
BEGIN
    -- Per candidate, whether this claim holds its key's lock (a candidate without a key needs
    -- none). A key met twice is locked twice, which costs nothing and ends at commit too.
    v_locked := ARRAY(SELECT k.key IS NULL
                             OR pg_try_advisory_xact_lock(hashtext('{schema}.concurrency'),
                                                          hashtext(k.key))
                        FROM unnest(p_keys) WITH ORDINALITY AS k(key, ord)
                       ORDER BY k.ord);
    -- Within a key, in claim order, as many as its limit leaves room for, its running jobs
    -- read through jobs_concurrency, and no further than the limit.
    v_free := ARRAY(
        SELECT c.id
          FROM (SELECT c.id, c.key, c.lim, c.locked, c.ord,
                       row_number() OVER (PARTITION BY c.key ORDER BY c.ord) AS rank
                  FROM unnest(p_ids, p_keys, p_limits, v_locked)
                       WITH ORDINALITY AS c(id, key, lim, locked, ord)) c
         WHERE c.key IS NULL
            -- Room for a key's rank-th candidate: no (limit - rank + 1)-th running job.
            OR (c.locked AND c.rank <= c.lim
                AND NOT EXISTS (SELECT FROM {schema}.jobs r
                                 WHERE r.concurrency_key = c.key AND r.state = 'running'
                                OFFSET c.lim - c.rank))
         ORDER BY c.ord);

    -- Most schemas have no rate limit at all: then their names are not even put together.
    IF EXISTS (SELECT FROM {schema}.rate_limits) THEN
        v_limits := ARRAY(
            SELECT l.name
              FROM {schema}.rate_limits l
             WHERE l.name = ANY (ARRAY(SELECT 'queue:' || q FROM unnest(p_queues) q
                                       UNION SELECT 'key:' || k FROM unnest(p_keys) k
                                              WHERE k IS NOT NULL))
             ORDER BY l.name
               FOR UPDATE);
    END IF;
    IF coalesce(cardinality(v_limits), 0) = 0 THEN
        -- No rate limit bears on these candidates: those their keys let start, start.
        RETURN QUERY SELECT unnest(v_free);
        RETURN;
    END IF;
    -- Within a queue and within a key, in claim order, as many as their rate limits allow.
    v_chosen := ARRAY(
        SELECT c.id
          FROM (SELECT c.*,
                       row_number() OVER (PARTITION BY c.queue ORDER BY c.ord) AS queue_rank,
                       row_number() OVER (PARTITION BY c.key ORDER BY c.ord) AS key_rank
                  FROM unnest(p_ids, p_queues, p_keys) WITH ORDINALITY AS c(id, queue, key, ord)
                 WHERE c.id = ANY (v_free)) c
          LEFT JOIN {schema}.rate_limits q ON q.name = 'queue:' || c.queue
          LEFT JOIN {schema}.rate_limits k ON k.name = 'key:' || c.key
         WHERE (q.name IS NULL OR c.queue_rank <= {schema}.rate_room(q))
           AND (k.name IS NULL OR c.key_rank <= {schema}.rate_room(k))
         ORDER BY c.ord);

    UPDATE {schema}.rate_limits l
       SET recent = ARRAY(SELECT t.at
                            FROM unnest(array_fill(now(), ARRAY[s.started::integer]) || l.recent)
                                 AS t(at)
                           ORDER BY t.at DESC
                           LIMIT l.starts)
      FROM (SELECT x.name, count(*) AS started
              FROM (SELECT 'queue:' || c.queue AS name, c.id
                      FROM unnest(p_ids, p_queues) AS c(id, queue)
                    UNION ALL
                    SELECT 'key:' || c.key, c.id
                      FROM unnest(p_ids, p_keys) AS c(id, key) WHERE c.key IS NOT NULL) x
             WHERE x.id = ANY (v_chosen)
             GROUP BY x.name) s
     WHERE l.name = s.name;

    RETURN QUERY SELECT unnest(v_chosen);
END
$$;

-- How many more jobs a rate limit lets start now: its starts less those it recorded within the
-- period.
CREATE OR REPLACE FUNCTION {schema}.rate_room(p_limit {schema}.rate_limits) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT p_limit.starts - count(*)
      FROM unnest(p_limit.recent) AS t(at)
     WHERE t.at > now() - p_limit.period_ms * interval '1 millisecond'
$$;
