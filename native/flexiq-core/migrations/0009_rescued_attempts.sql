-- Outcomes that arrive late, and leases through a restart of PostgreSQL.
--
-- rescued_attempt: a rescue that takes a job from an attempt whose lease passed notes the
-- attempt; until another attempt starts (the claim clears it), that attempt's outcome is still
-- recorded when it reaches the server: its handler may well have finished while PostgreSQL was
-- out of reach.
--
-- lease_ms: the lease the running attempt's worker holds it under. A lease that passed while
-- PostgreSQL was down is rescued only once a whole lease has passed since the server started,
-- so that the workers, back in touch, extend their leases first.
--
-- Both metadata only: no row is rewritten.
ALTER TABLE {schema}.jobs
    ADD COLUMN rescued_attempt integer,
    ADD COLUMN lease_ms bigint;

-- Workers claim and rescue through these columns: each role granted a worker's privileges
-- before (grant_worker.sql, which grants them from now on) may update them too.
DO $$
DECLARE
    v_role text;
BEGIN
    FOR v_role IN
        SELECT DISTINCT p.grantee
          FROM information_schema.column_privileges p
         WHERE p.table_schema = '{schema}' AND p.table_name = 'jobs'
           AND p.column_name = 'claim_token' AND p.privilege_type = 'UPDATE'
           AND p.grantee <> current_user
    LOOP
        EXECUTE format('GRANT UPDATE (rescued_attempt, lease_ms) ON {schema}.jobs TO %I', v_role);
    END LOOP;
END
$$;
