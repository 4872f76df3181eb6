-- Cancels one batch of a bulk cancel: the pending jobs of the batch bulk_batch.sql selects,
-- each checked again under its row lock (a job a worker claimed meanwhile is left). Finishing
-- releases their keys (trigger jobs_release_key). Returns the batch's smallest id (the cursor
-- of the next batch), how many jobs it selected and how many it cancelled.
WITH batch AS MATERIALIZED (
    {bulk_batch}
), cancelled AS (
    UPDATE {schema}.jobs j
       SET state = 'cancelled', finished_at = now(), lease_expires_at = NULL
     WHERE j.id = ANY (ARRAY(SELECT b.id FROM batch b))
       AND j.state IN ('available', 'scheduled', 'retryable')
    RETURNING j.id
)
SELECT (SELECT min(b.id) FROM batch b) AS last_id,
       (SELECT count(*) FROM batch b) AS selected,
       (SELECT count(*) FROM cancelled) AS changed
