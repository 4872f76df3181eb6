-- The value job $1 stored as checkpoint $2, if any.
SELECT value FROM {schema}.checkpoints WHERE job_id = $1 AND name = $2
