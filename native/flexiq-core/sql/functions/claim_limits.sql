-- What a claim may start of jobs that carry limits (claim.sql). Both functions run their queries
-- apart from the claim's statement: a VOLATILE function's query takes a snapshot of its own,
-- after the lock it took, so it sees every claim that committed before that lock came free.

-- How many jobs of a concurrency key run, counted under the key's transaction-level advisory
-- lock; NULL when another claim holds that lock (its claim then decides for the key, and this
-- one passes the key over rather than wait). Keys share lock numbers only by hash collision,
-- which makes a claim pass over a key now and then, never start one job too many.
CREATE OR REPLACE FUNCTION {schema}.concurrency_running(p_key text) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF NOT pg_try_advisory_xact_lock(hashtext('{schema}.concurrency'), hashtext(p_key)) THEN
        RETURN NULL;
    END IF;
    RETURN (SELECT count(*) FROM {schema}.jobs j
             WHERE j.concurrency_key = p_key AND j.state = 'running');
END
$$;

-- How many more jobs a rate limit lets start now: its starts less those it recorded within the
-- period. Locks the limit's row until the claim commits, so claims under one limit take turns;
-- the claim records its starts in the same statement.
CREATE OR REPLACE FUNCTION {schema}.rate_room(p_name text) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_limit {schema}.rate_limits;
BEGIN
    SELECT * INTO v_limit FROM {schema}.rate_limits l WHERE l.name = p_name FOR UPDATE;
    RETURN v_limit.starts - (SELECT count(*) FROM unnest(v_limit.recent) AS t(at)
                               WHERE t.at > now() - v_limit.period_ms * interval '1 millisecond');
END
$$;
