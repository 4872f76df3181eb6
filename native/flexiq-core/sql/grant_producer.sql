-- Grants a producer's privileges on the schema to the role named by the setting
-- flexiq.grantee (set in the same transaction; %I quotes it): enough to enqueue, keyed,
-- unkeyed and in bulk, and to read jobs. Nothing that changes a job's state or deletes a job.
DO $$
DECLARE
    v_role text := current_setting('flexiq.grantee');
BEGIN
    EXECUTE format('GRANT USAGE ON SCHEMA {schema} TO %I', v_role);
    -- Enqueue inserts jobs and reads the holders of keys it replays; their ids come from the
    -- sequence.
    EXECUTE format('GRANT SELECT, INSERT ON {schema}.jobs TO %I', v_role);
    EXECUTE format('GRANT USAGE ON SEQUENCE {schema}.jobs_id_seq TO %I', v_role);
    -- enqueue_keyed releases keys whose retention has closed before taking them over.
    EXECUTE format('GRANT UPDATE (key_held) ON {schema}.jobs TO %I', v_role);
    -- A process declaring schedules renews their rows before each tick.
    EXECUTE format('GRANT SELECT, INSERT, UPDATE (cron, zone, task, queue, payload, options, seen_at)
                    ON {schema}.schedules TO %I', v_role);
    -- Named, so that enqueueing works where EXECUTE was revoked from PUBLIC.
    EXECUTE format('GRANT EXECUTE ON FUNCTION {schema}.enqueue, {schema}.require,
                    {schema}.enqueue_keyed, {schema}.enqueue_flow, {schema}.place_jobs,
                    {schema}.insert_keyed,
                    {schema}.new_jobs, {schema}.request_of, {schema}.announce,
                    {schema}.micros_to_timestamptz, {schema}.payload_fingerprint TO %I',
                   v_role);
END
$$
