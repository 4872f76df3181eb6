-- Claims up to $2 due jobs of the queues in $1 for a lease of $3 milliseconds: by priority,
-- then due time. SKIP LOCKED lets concurrent claimers pass each other's rows.
WITH next AS (
    SELECT id
      FROM {schema}.jobs
     WHERE state IN ('available', 'scheduled', 'retryable')
       AND queue = ANY ($1)
       AND run_at <= now()
     ORDER BY priority DESC, run_at, id
     LIMIT $2
       FOR UPDATE SKIP LOCKED
)
UPDATE {schema}.jobs j
   SET state = 'running', attempt = j.attempt + 1, started_at = now(),
       lease_expires_at = now() + $3 * interval '1 millisecond'
  FROM next
 WHERE j.id = next.id
RETURNING j.id, j.queue, j.task, j.payload, j.attempt, j.max_attempts
