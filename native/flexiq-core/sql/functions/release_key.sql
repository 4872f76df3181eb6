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

-- CREATE OR REPLACE TRIGGER replaces the trigger under a lock that lets readers of the jobs
-- table through; PostgreSQL 13 lacks it, so there the trigger is dropped and created again, in
-- the migration's transaction (DROP TRIGGER locks the table until the migration commits).
DO $release_key$
DECLARE
    v_trigger CONSTANT text := $trigger$TRIGGER jobs_release_key BEFORE UPDATE OF state ON {schema}.jobs
    FOR EACH ROW
    WHEN (OLD.key_held
          AND NEW.state IN ('completed', 'dead', 'cancelled')
          AND OLD.state NOT IN ('completed', 'dead', 'cancelled'))
    EXECUTE FUNCTION {schema}.release_key()$trigger$;
BEGIN
    IF current_setting('server_version_num')::integer >= 140000 THEN
        EXECUTE 'CREATE OR REPLACE ' || v_trigger;
    ELSE
        DROP TRIGGER IF EXISTS jobs_release_key ON {schema}.jobs;
        EXECUTE 'CREATE ' || v_trigger;
    END IF;
END
$release_key$;
