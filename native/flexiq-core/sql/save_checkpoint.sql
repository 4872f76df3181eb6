-- Stores checkpoint $3 = $4 for job $1, while attempt $2 still holds the job. Each parameter
-- appears once and in order, so that a handler can also run it with JDBC's placeholders on a
-- connection of its own, where the checkpoint commits with the stage's effect.
INSERT INTO {schema}.checkpoints (job_id, name, value, attempt, saved_at)
SELECT j.id, c.name, c.value, j.attempt, now()
  FROM (SELECT $1::bigint AS id, $2::integer AS attempt, $3::text AS name, $4::bytea AS value) c
  JOIN {schema}.jobs j ON j.id = c.id AND j.attempt = c.attempt AND j.state = 'running'
    ON CONFLICT (job_id, name) DO UPDATE
   SET value = excluded.value, attempt = excluded.attempt, saved_at = excluded.saved_at
