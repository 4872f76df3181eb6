-- Operator queries and pruning: jobs found by key, listed newest first by queue and state,
-- counted, finished per minute, and deleted once their retention has passed. Every index here
-- is partial on rows an insert never writes (finished jobs, released keys), so that an enqueue
-- pays nothing for them. A job enters them as it finishes (the update that finishes it writes a
-- new row version anyway, its state being indexed), so each one costs every finishing job an
-- index entry: there are as few as the queries allow.

-- Finished jobs by state and age, with their queue: counts and throughput over a recent window
-- read the index alone; pruning reads each state's oldest first.
-- A job has finished_at exactly while it is final, and this predicate is implied by a range
-- on finished_at, however the states are named.
CREATE INDEX jobs_finished ON {schema}.jobs (state, finished_at, queue)
    WHERE finished_at IS NOT NULL;

-- Finished jobs newest first, for paging by id: by state, and by queue and state. A task filter
-- is checked on the rows these give.
CREATE INDEX jobs_finished_by_state ON {schema}.jobs (state, id)
    WHERE state IN ('completed', 'cancelled', 'dead');
CREATE INDEX jobs_finished_by_queue ON {schema}.jobs (queue, state, id)
    WHERE state IN ('completed', 'cancelled', 'dead');

-- Jobs whose key was released, by key, newest first: with jobs_held_key, which has the
-- holder, they answer which job a key names. Keyed inserts hold their key, so never enter it.
CREATE INDEX jobs_released_key ON {schema}.jobs (key_scope, key_digest, id)
    WHERE key_digest IS NOT NULL AND NOT key_held;
