-- Moves a job out of the active states and releases its key binding in the same call: the
-- binding is deleted, or, while a retention window is still open, kept until it closes.
-- Returns false when the job is not in one of p_from (nothing is changed then).
CREATE FUNCTION {schema}.finish_job(p_id bigint, p_from text[], p_state text, p_error text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE {schema}.jobs
       SET state = p_state, finished_at = now(), lease_expires_at = NULL,
           last_error = coalesce(p_error, last_error)
     WHERE id = p_id AND state = ANY (p_from);
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    DELETE FROM {schema}.job_keys
     WHERE job_id = p_id AND (retain_until IS NULL OR retain_until <= now());
    UPDATE {schema}.job_keys SET held_until = retain_until
     WHERE job_id = p_id AND held_until IS NULL;
    RETURN true;
END
$$;
