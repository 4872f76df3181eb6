-- Operator queries: jobs found by key, listed newest first by queue, state and task, counted,
-- and finished per minute. Every index here is partial on rows an insert never writes (finished
-- jobs, released keys), so that an enqueue pays nothing for them. A job enters them as it
-- finishes: the update that finishes it writes a new row version anyway (its state is indexed),
-- and each index whose predicate that version meets takes one entry.

-- Finished jobs by when they finished, with their queue and state, so that counts and
-- throughput over a recent window read the index only; pruning by age reads it too.
CREATE INDEX jobs_finished_at ON {schema}.jobs (finished_at, queue, state)
    WHERE finished_at IS NOT NULL;

-- Finished jobs newest first, for paging by id: by state, by queue and state, by task and
-- state. Active jobs are listed through jobs_due and jobs_leases.
CREATE INDEX jobs_finished_by_state ON {schema}.jobs (state, id)
    WHERE state IN ('completed', 'cancelled', 'dead');
CREATE INDEX jobs_finished_by_queue ON {schema}.jobs (queue, state, id)
    WHERE state IN ('completed', 'cancelled', 'dead');
CREATE INDEX jobs_finished_by_task ON {schema}.jobs (task, state, id)
    WHERE state IN ('completed', 'cancelled', 'dead');

-- Jobs whose key was released, by key, newest first: with jobs_held_key, which has the
-- holder, they answer which job a key names. Keyed inserts hold their key, so never enter it.
CREATE INDEX jobs_released_key ON {schema}.jobs (key_scope, key_digest, id)
    WHERE key_digest IS NOT NULL AND NOT key_held;
