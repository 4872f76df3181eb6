-- A batch with keys: one call of enqueue_keyed. The first fourteen parameters are the job
-- columns, then come each key's scope, digest and preview, and each entry's rank in the
-- caller's order.
SELECT job_id, created
  FROM {schema}.enqueue_keyed($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb[], $14,
                              $15, $16, $17, $18)
