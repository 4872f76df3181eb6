-- Leases, not running jobs, are indexed, and a job holds a lease exactly while it runs.
--
-- The index jobs_leases covered running jobs (WHERE state = 'running'). Statistics taken while
-- few jobs ran make such an index look empty, and a cached plan of any statement naming its
-- jobs by id and state then read every running job for each id. Indexing leases instead keeps
-- it out of those statements: only the ones that look for leases name lease_expires_at.

-- A lease means nothing once its job has left running; every statement that finishes, fails,
-- gives back, rescues or redrives a job clears it, but a row that kept one (written by hand or
-- by an earlier build) would fail the constraint below.
UPDATE {schema}.jobs SET lease_expires_at = NULL
 WHERE state <> 'running' AND lease_expires_at IS NOT NULL;

DROP INDEX {schema}.jobs_leases;
CREATE INDEX jobs_leases ON {schema}.jobs (lease_expires_at) WHERE lease_expires_at IS NOT NULL;

-- Added unchecked, then checked: VALIDATE reads the table under a lock that lets writes go on,
-- where a checked ADD reads it under an exclusive one. (Migrations run in one transaction, which
-- holds the table exclusively from DROP INDEX on; the split pays once this step runs apart.)
ALTER TABLE {schema}.jobs ADD CONSTRAINT jobs_leased_while_running
    CHECK ((state = 'running') = (lease_expires_at IS NOT NULL)) NOT VALID;
ALTER TABLE {schema}.jobs VALIDATE CONSTRAINT jobs_leased_while_running;

-- Leases by claim, for a worker that lost a claim's answer (recover_claim): without it, a
-- table analyzed while most jobs ran, or not analyzed at all, is read whole to find them.
CREATE INDEX jobs_claims ON {schema}.jobs (claim_token) WHERE lease_expires_at IS NOT NULL;
