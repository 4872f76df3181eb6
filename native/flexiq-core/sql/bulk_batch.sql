-- The jobs a bulk action selects (to be filled in by the action's statement), newest first:
-- ids below $1, in state $2, created from $6 and before $7 (µs since the epoch; NULL: no
-- bound), at most $5 of them (NULL: all). {filters} is empty or adds `AND j.queue = $3` and/or
-- `AND j.task = $4`. Each state is read through the index list_jobs.sql reads it through, from
-- the cursor on; running jobs are never selected.
SELECT b.id
  FROM ((SELECT j.id
           FROM {schema}.jobs j
          WHERE j.state IN ('available', 'scheduled', 'retryable') AND j.state = $2
            AND j.id < $1 {filters} {created}
          ORDER BY j.id DESC
          LIMIT $5)
        UNION ALL
        (SELECT j.id
           FROM {schema}.jobs j
          WHERE j.state = 'completed' AND 'completed' = $2
            AND j.id < $1 {filters} {created}
          ORDER BY j.id DESC
          LIMIT $5)
        UNION ALL
        (SELECT j.id
           FROM {schema}.jobs j
          WHERE j.state = 'cancelled' AND 'cancelled' = $2
            AND j.id < $1 {filters} {created}
          ORDER BY j.id DESC
          LIMIT $5)
        UNION ALL
        (SELECT j.id
           FROM {schema}.jobs j
          WHERE j.state = 'dead' AND 'dead' = $2
            AND j.id < $1 {filters} {created}
          ORDER BY j.id DESC
          LIMIT $5)) b
 ORDER BY b.id DESC
 LIMIT $5
