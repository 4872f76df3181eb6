-- Maintenance: finished jobs are deleted once their retention has passed (prune_finished).
-- jobs_prunable holds exactly the rows that pruning may delete, by state and then age, so each
-- pass reads the oldest of each final state directly. A job has finished_at exactly while it
-- is final (completed, dead or cancelled), so inserts never write to this index, and a
-- finishing job writes to it only once its key is free: a job whose key is still held enters
-- it when maintenance releases the key.
CREATE INDEX jobs_prunable ON {schema}.jobs (state, finished_at)
    WHERE finished_at IS NOT NULL AND NOT key_held;

-- Deleting a job deletes its redrive keys by cascade; without this index, every deleted job
-- would read the whole redrives table to find them.
CREATE INDEX redrives_job ON {schema}.redrives (job_id);
