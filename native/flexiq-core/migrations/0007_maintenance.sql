-- Maintenance deletes finished jobs once their retention has passed (prune_finished, through
-- jobs_finished). Deleting a job deletes its redrive keys by cascade; without this index, every
-- deleted job would read the whole redrives table to find them.
CREATE INDEX redrives_job ON {schema}.redrives (job_id);
