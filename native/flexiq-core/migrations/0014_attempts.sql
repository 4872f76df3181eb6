-- Attempt history. claimed_by: the process (host:pid) whose claim started the job's current or
-- last attempt. attempts: every attempt that did not complete its job, as it ended: failed
-- (with the handler's error, bounded as last_error is) or its lease expired; a late failure of
-- a rescued attempt replaces the rescue's row. The attempt that completes a job, and the one
-- running, are the job row's own (started_at, finished_at, claimed_by): the hot path writes no
-- history row. Rows go with their job (ON DELETE CASCADE), so retention is the job's.
ALTER TABLE {schema}.jobs ADD COLUMN claimed_by text;
CREATE TABLE {schema}.attempts (
    id          bigserial   PRIMARY KEY,
    job_id      bigint      NOT NULL REFERENCES {schema}.jobs (id) ON DELETE CASCADE,
    attempt     integer     NOT NULL,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz NOT NULL,
    worker      text,
    outcome     text        NOT NULL,
    error       text
);
-- A job's attempts in order, and the one a late failure replaces (an attempt starts once).
CREATE UNIQUE INDEX attempts_job ON {schema}.attempts (job_id, started_at);
