-- Pausing a queue, exactly: once pause_queue has returned, no job of the queue starts until
-- resume_queue. Each queue has a transaction-level advisory lock, which every claim takes
-- shared and pause_queue exclusive:
-- - a claim that took it before the pause holds it until it commits, so the pause waits for
--   that claim's jobs to have started before it records the pause and returns;
-- - a claim that asks for it later waits for the pause's commit, and then reads the paused
--   queues in a statement of its own, whose snapshot is taken after the lock came free.
-- Locks on several queues are taken in name order, so that claims and pauses never deadlock.
-- A pause called inside a longer transaction holds the queue's claims back until it ends.

-- The queues of p_queues whose jobs this claim may start (claim.sql); their locks are held
-- until the claim commits.
CREATE OR REPLACE FUNCTION {schema}.open_queues(p_queues text[]) RETURNS text[]
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(hashtext('{schema}.pause'), hashtext(q))
       FROM (SELECT DISTINCT q FROM unnest(p_queues) AS q ORDER BY q) s;
    RETURN ARRAY(SELECT q FROM unnest(p_queues) AS q
                  WHERE NOT EXISTS (SELECT FROM {schema}.paused_queues p WHERE p.queue = q));
END
$$;

-- Pauses p_queue once every claim that may be starting its jobs has committed; returns false
-- when it was paused already (the pause keeps its first time).
CREATE OR REPLACE FUNCTION {schema}.pause_queue(p_queue text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF octet_length(p_queue) BETWEEN 1 AND 128 IS NOT TRUE THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'flexiq.pause_queue: queue must be 1 to 128 bytes, got '
                      || coalesce(octet_length(p_queue)::text || ' bytes', 'NULL');
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('{schema}.pause'), hashtext(p_queue));
    INSERT INTO {schema}.paused_queues (queue) VALUES (p_queue) ON CONFLICT (queue) DO NOTHING;
    RETURN FOUND;
END
$$;

-- Resumes p_queue and wakes idle workers on it at once (on commit); returns false when it was
-- not paused.
CREATE OR REPLACE FUNCTION {schema}.resume_queue(p_queue text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    DELETE FROM {schema}.paused_queues WHERE queue = p_queue;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM {schema}.announce(ARRAY[p_queue]);
    RETURN true;
END
$$;
