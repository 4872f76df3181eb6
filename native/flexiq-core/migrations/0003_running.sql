-- Running jobs. A running job is held under a lease that its worker extends while the handler
-- runs; once the lease has passed, the job goes back to the queue (or to the dead letters, when
-- its attempts are spent).
CREATE INDEX jobs_leases ON {schema}.jobs (lease_expires_at) WHERE state = 'running';

-- A job that finishes (completes, is dead-lettered or cancelled), by whichever statement,
-- releases its key: at once, or, under an open retention window, when the window closes.
CREATE FUNCTION {schema}.release_key() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.held_until := CASE WHEN NEW.key_held AND NEW.retain_until > now() THEN NEW.retain_until END;
    NEW.key_held := NEW.held_until IS NOT NULL;
    RETURN NEW;
END
$$;

CREATE TRIGGER jobs_release_key BEFORE UPDATE OF state ON {schema}.jobs
    FOR EACH ROW
    WHEN (OLD.key_held
          AND NEW.state IN ('completed', 'dead', 'cancelled')
          AND OLD.state NOT IN ('completed', 'dead', 'cancelled'))
    EXECUTE FUNCTION {schema}.release_key();

-- Wake-ups: statements that make jobs due now announce their queues on the schema's channel,
-- once per queue; PostgreSQL delivers the announcement when the statement's transaction commits.
-- Returns how many queues were announced.
CREATE FUNCTION {schema}.announce(p_queues text[]) RETURNS integer
LANGUAGE sql AS $$
    SELECT count(pg_notify('{channel}', q))::integer FROM unnest(p_queues) AS q
$$;

-- New jobs due now announce their queues. A replay inserts nothing and so announces nothing.
CREATE FUNCTION {schema}.announce_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM {schema}.announce(ARRAY(SELECT DISTINCT i.queue FROM inserted i WHERE i.state = 'available'));
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_announce_inserted AFTER INSERT ON {schema}.jobs
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.announce_inserted();

-- Checkpoints: small values a handler stores under a name while a job runs, read back by later
-- attempts of the same job. They go with their job.
CREATE TABLE {schema}.checkpoints (
    job_id     bigint      NOT NULL REFERENCES {schema}.jobs (id) ON DELETE CASCADE,
    name       text        NOT NULL,
    value      bytea       NOT NULL,
    attempt    integer     NOT NULL,
    saved_at   timestamptz NOT NULL,
    PRIMARY KEY (job_id, name)
);

-- Redrives: each redrive request's key (SHA-256, never raw), so that a repeated request finds
-- the redrive it already made instead of making another.
CREATE TABLE {schema}.redrives (
    key_digest  bytea       PRIMARY KEY,
    key_preview text        NOT NULL,
    job_id      bigint      NOT NULL REFERENCES {schema}.jobs (id) ON DELETE CASCADE,
    redriven_at timestamptz NOT NULL
);

-- Puts dead-lettered job p_job back to work (due now, its attempts starting over, holding its
-- key again) under a redrive key (p_key_digest) of its own. Returns what happened:
--   redriven   the job is pending again;
--   replayed   this redrive key already redrove this job: nothing changed;
--   key_held   the job's key is held by another active job (holder): nothing changed, for two
--              active jobs never hold one key;
--   not_dead   the job is not dead-lettered (state): nothing changed;
--   not_found  no such job.
-- A redrive key already used for another job raises SQLSTATE FQ410.
CREATE FUNCTION {schema}.redrive(p_job bigint, p_key_digest bytea, p_key_preview text)
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
               finished_at = NULL, lease_expires_at = NULL,
               key_held = j.key_digest IS NOT NULL, held_until = NULL
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
