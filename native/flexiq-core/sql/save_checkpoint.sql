-- Stores checkpoint $3 = $4 for job $1, while attempt $2 still holds the job.
INSERT INTO {schema}.checkpoints (job_id, name, value, attempt, saved_at)
SELECT j.id, $3, $4, j.attempt, now()
  FROM {schema}.jobs j
 WHERE j.id = $1 AND j.attempt = $2 AND j.state = 'running'
    ON CONFLICT (job_id, name) DO UPDATE
   SET value = excluded.value, attempt = excluded.attempt, saved_at = excluded.saved_at
