-- Claims up to $3 due jobs of the queues in $1 whose task is in $2, each under a lease of $4
-- milliseconds: by priority, then due time. SKIP LOCKED lets concurrent claimers pass each
-- other's rows.
WITH next AS (
    SELECT id
      FROM {schema}.jobs
     WHERE state IN ('available', 'scheduled', 'retryable')
       AND queue = ANY ($1)
       AND task = ANY ($2)
       AND run_at <= now()
     ORDER BY priority DESC, run_at, id
     LIMIT $3
       FOR UPDATE SKIP LOCKED
)
UPDATE {schema}.jobs j
   SET state = 'running', attempt = j.attempt + 1, started_at = now(),
       lease_expires_at = now() + $4 * interval '1 millisecond'
  FROM next
 WHERE j.id = next.id
RETURNING j.id, j.queue, j.task, j.payload, j.attempt, j.max_attempts, j.timeout_ms
