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
    WHEN (NEW.state IN ('completed', 'dead', 'cancelled')
          AND OLD.state NOT IN ('completed', 'dead', 'cancelled'))
    EXECUTE FUNCTION {schema}.release_key();
