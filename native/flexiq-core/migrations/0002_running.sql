-- Running jobs. A running job is held under a lease that its worker extends while the handler
-- runs; once the lease has passed, the job goes back to the queue (or to the dead letters, when
-- its attempts are spent).
CREATE INDEX jobs_leases ON {schema}.jobs (lease_expires_at) WHERE state = 'running';

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
