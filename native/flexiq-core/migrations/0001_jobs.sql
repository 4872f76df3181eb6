-- Jobs. A job's dedup key (by digest, never raw) lives on the job's own row, so a held key can
-- never outlive, or be kept apart from, the job it names.
-- {schema} is replaced by the client's schema name, which is checked to be a plain identifier.
-- Migrations hold tables, indexes and sequences; functions and triggers are definitions of
-- their own (sql/functions/), applied after the migrations whenever they change (schema.rs).

CREATE TABLE {schema}.jobs (
    id               bigserial PRIMARY KEY,
    queue            text        NOT NULL,
    task             text        NOT NULL,
    payload          bytea       NOT NULL,
    state            text        NOT NULL,
    priority         integer     NOT NULL,
    run_at           timestamptz NOT NULL,
    attempt          integer     NOT NULL DEFAULT 0,
    max_attempts     integer     NOT NULL,
    retry_initial_ms bigint      NOT NULL,
    retry_max_ms     bigint      NOT NULL,
    retry_multiplier double precision NOT NULL,
    retry_jitter     double precision NOT NULL,
    timeout_ms       bigint,
    tags             jsonb       NOT NULL,
    -- The key: its scope, SHA-256 and a bounded preview. Kept after release, for operators.
    key_scope        text,
    key_digest       bytea,
    key_preview      text,
    -- What was asked for, as asked: a replay is compared on these and on the columns above
    -- (run_at and retain_until are what they worked out to).
    requested_run_at timestamptz,
    requested_delay_ms bigint,
    key_retention_ms bigint,
    -- Whether the key resolves to this job: true while it is pending or running, and after
    -- that until held_until (acceptance + retention) when a retention window was asked for.
    key_held         boolean     NOT NULL,
    retain_until     timestamptz,
    held_until       timestamptz,
    created_at       timestamptz NOT NULL,
    started_at       timestamptz,
    finished_at      timestamptz,
    lease_expires_at timestamptz,
    last_error       text,
    -- The claim that started the running attempt: a worker whose claim's answer was lost
    -- finds its jobs again by this token once PostgreSQL answers.
    claim_token      bigint,
    CONSTRAINT jobs_state_known CHECK (state IN
        ('available', 'scheduled', 'retryable', 'running', 'completed', 'dead', 'cancelled')),
    CONSTRAINT jobs_attempts_positive CHECK (max_attempts >= 1 AND attempt >= 0),
    CONSTRAINT jobs_held_keys_exist CHECK (NOT key_held OR key_digest IS NOT NULL)
);

-- The dedup guarantee: among jobs holding their key, one per scope and key. Enqueue inserts
-- with ON CONFLICT against this index; nothing in any process decides it.
CREATE UNIQUE INDEX jobs_held_key ON {schema}.jobs (key_scope, key_digest) WHERE key_held;

-- Finished jobs whose retention window will close: maintenance releases them.
CREATE INDEX jobs_key_expiry ON {schema}.jobs (held_until) WHERE key_held AND held_until IS NOT NULL;

-- Claiming reads due jobs of a queue by priority, then time.
CREATE INDEX jobs_due ON {schema}.jobs (queue, priority DESC, run_at, id)
    WHERE state IN ('available', 'scheduled', 'retryable');
