-- Grants a worker's privileges on the schema to the role named by the setting flexiq.grantee
-- (set in the same transaction; %I quotes it): enough to claim jobs, keep their leases, record
-- how attempts ended, give jobs back, rescue expired leases, keep checkpoints, count starts
-- against rate limits, pass over paused queues and keep its registration. Nothing that deletes a job or touches its
-- payload or key.
DO $$
DECLARE
    v_role text := current_setting('flexiq.grantee');
BEGIN
    EXECUTE format('GRANT USAGE ON SCHEMA {schema} TO %I', v_role);
    EXECUTE format('GRANT SELECT ON {schema}.jobs TO %I', v_role);
    -- The columns an attempt moves; the key columns follow by trigger when a job finishes.
    EXECUTE format('GRANT UPDATE (state, attempt, run_at, started_at, finished_at,
                    lease_expires_at, last_error, claim_token, rescued_attempt, lease_ms, claimed_by)
                    ON {schema}.jobs TO %I', v_role);
    -- Attempts that fail or are rescued enter the job's history.
    EXECUTE format('GRANT SELECT, INSERT, UPDATE (finished_at, outcome, error)
                    ON {schema}.attempts TO %I', v_role);
    EXECUTE format('GRANT USAGE ON SEQUENCE {schema}.attempts_id_seq TO %I', v_role);
    EXECUTE format('GRANT SELECT, INSERT ON {schema}.checkpoints TO %I', v_role);
    EXECUTE format('GRANT UPDATE (value, attempt, saved_at) ON {schema}.checkpoints TO %I',
                   v_role);
    -- Giving jobs back announces them to idle workers.
    EXECUTE format('GRANT EXECUTE ON FUNCTION {schema}.announce TO %I', v_role);
    -- Claims count running jobs by concurrency key and keep rate limits' recent starts.
    EXECUTE format('GRANT EXECUTE ON FUNCTION {schema}.limit_claim, {schema}.rate_room TO %I',
                   v_role);
    EXECUTE format('GRANT SELECT, UPDATE (recent) ON {schema}.rate_limits TO %I', v_role);
    -- Claims pass over paused queues, under each queue's pause lock.
    EXECUTE format('GRANT EXECUTE ON FUNCTION {schema}.open_queues TO %I', v_role);
    EXECUTE format('GRANT SELECT ON {schema}.paused_queues TO %I', v_role);
    -- A worker registers itself, heartbeats and removes its registration as it stops.
    EXECUTE format('GRANT SELECT, INSERT, DELETE, UPDATE (heartbeat_at) ON {schema}.workers TO %I',
                   v_role);
END
$$
