-- A job that finishes (completes, is dead-lettered or cancelled), by whichever statement,
-- releases its key: at once, or, under an open retention window, when the window closes.
CREATE OR REPLACE FUNCTION {schema}.release_key() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.held_until := CASE WHEN NEW.key_held AND NEW.retain_until > now() THEN NEW.retain_until END;
    NEW.key_held := NEW.held_until IS NOT NULL;
    RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER jobs_release_key BEFORE UPDATE OF state ON {schema}.jobs
    FOR EACH ROW
    WHEN (OLD.key_held
          AND NEW.state IN ('completed', 'dead', 'cancelled')
          AND OLD.state NOT IN ('completed', 'dead', 'cancelled'))
    EXECUTE FUNCTION {schema}.release_key();
