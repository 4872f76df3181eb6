-- Jobs, and the bindings that tie a dedup key (by digest, never raw) to the job that owns it.
-- {schema} is replaced by the client's schema name, which is checked to be a plain identifier.

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
    tags             jsonb       NOT NULL DEFAULT '[]',
    -- Copies of the binding's scope, digest and preview, so that getJob can show them after
    -- the binding itself has been released.
    key_scope        text,
    key_digest       bytea,
    key_preview      text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz,
    lease_expires_at timestamptz,
    last_error       text,
    CONSTRAINT jobs_state_known CHECK (state IN
        ('available', 'scheduled', 'retryable', 'running', 'completed', 'dead', 'cancelled')),
    CONSTRAINT jobs_attempts_positive CHECK (max_attempts >= 1 AND attempt >= 0)
);

-- Claiming reads due jobs of a queue by priority, then time.
CREATE INDEX jobs_due ON {schema}.jobs (queue, priority DESC, run_at, id)
    WHERE state IN ('available', 'scheduled', 'retryable');

-- One row per bound key. The primary key is the dedup guarantee: two enqueues of one key in
-- one scope can never both insert here. held_until is NULL while the job is active (pending or
-- running); when the job leaves the active states the binding is deleted, or, under a
-- retention window, kept with held_until = retain_until. A binding whose held_until has passed
-- may be taken over by a new job; maintenance deletes it. ON DELETE CASCADE: purging the job
-- removes its binding, so a binding never outlives its job. The reference is checked at commit
-- because the enqueue function binds the key before it inserts the job the key names.
CREATE TABLE {schema}.job_keys (
    scope        text        NOT NULL,
    key_digest   bytea       NOT NULL,
    job_id       bigint      NOT NULL REFERENCES {schema}.jobs (id) ON DELETE CASCADE
                                     DEFERRABLE INITIALLY DEFERRED,
    request      jsonb       NOT NULL,
    key_preview  text        NOT NULL,
    accepted_at  timestamptz NOT NULL,
    retain_until timestamptz,
    held_until   timestamptz,
    PRIMARY KEY (scope, key_digest)
);

CREATE INDEX job_keys_job ON {schema}.job_keys (job_id);
CREATE INDEX job_keys_expiry ON {schema}.job_keys (held_until) WHERE held_until IS NOT NULL;
