-- Flow control. flow: what a request asked for beyond the job's own options (a deadline, a
-- concurrency key and its limit, a debounce or a throttle), as a JSON object, compared on replay
-- like the columns and replaced with them by a debounce. The other columns hold what the claim
-- and the sweep read of it: the deadline, after which the job, if it has not started, is
-- dead-lettered instead of run, and the concurrency key with the most jobs of that key that may
-- run at once.
ALTER TABLE {schema}.jobs
    ADD COLUMN flow jsonb,
    ADD COLUMN deadline timestamptz,
    ADD COLUMN concurrency_key text,
    ADD COLUMN concurrency_limit integer;
-- Rows written before this migration have neither, which the check accepts: NOT VALID spares
-- reading them under the migration's lock.
ALTER TABLE {schema}.jobs ADD CONSTRAINT jobs_concurrency_limited
    CHECK ((concurrency_key IS NULL) = (concurrency_limit IS NULL) AND concurrency_limit >= 1)
    NOT VALID;

-- Waiting jobs with a deadline, for the sweep that dead-letters those past it (rescue_expired);
-- only jobs that have a deadline and wait enter it. "Waiting" is said as "not finished, not
-- running" rather than by listing states, so that the sweep's condition implies this index's
-- predicate and not that of jobs_due: statistics that make jobs_due look empty cannot then
-- talk the planner into reading all of it.
CREATE INDEX jobs_deadlines ON {schema}.jobs (deadline)
    WHERE deadline IS NOT NULL AND finished_at IS NULL AND state <> 'running';

-- Running jobs by concurrency key, for the claim to count them. Said by state, not by lease,
-- so that a count by key can only use this index and never jobs_leases.
CREATE INDEX jobs_concurrency ON {schema}.jobs (concurrency_key)
    WHERE concurrency_key IS NOT NULL AND state = 'running';

-- Rate limits, set by any client and kept by every claim: at most `starts` jobs of a queue
-- ('queue:<name>') or of a concurrency key ('key:<key>') start within any `period_ms`. recent:
-- the latest starts, newest first, at most `starts` of them; a claim may start as many jobs as
-- there are of those older than the period, plus the room left in the array.
CREATE TABLE {schema}.rate_limits (
    name       text        PRIMARY KEY,
    starts     integer     NOT NULL CHECK (starts >= 1),
    period_ms  bigint      NOT NULL CHECK (period_ms >= 1),
    recent     timestamptz[] NOT NULL DEFAULT '{}'
);
