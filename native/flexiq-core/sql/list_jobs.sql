-- One page of jobs, newest first: ids below $1, in the states $2, at most $5 of them.
-- {filters} is empty or adds `AND j.queue = $3` and/or `AND j.task = $4`. Each state is read
-- through an index of its own: pending jobs through jobs_due (a queue's, or all of them: the
-- backlog), running ones through jobs_leases (all of them: one lease per running job),
-- finished ones through jobs_finished_by_queue, _by_task or _by_state, from the cursor on. A
-- branch whose states $2 leaves out is not run.
SELECT page.*
  FROM ((SELECT {job_columns}
           FROM {schema}.jobs j
          WHERE j.state IN ('available', 'scheduled', 'retryable') AND j.state = ANY ($2)
            AND j.id < $1 {filters}
          ORDER BY j.id DESC
          LIMIT $5)
        UNION ALL
        (SELECT {job_columns}
           FROM {schema}.jobs j
          WHERE j.lease_expires_at > '-infinity' AND 'running' = ANY ($2)
            AND j.id < $1 {filters})
        UNION ALL
        (SELECT {job_columns}
           FROM {schema}.jobs j
          WHERE j.state = 'completed' AND 'completed' = ANY ($2)
            AND j.id < $1 {filters}
          ORDER BY j.id DESC
          LIMIT $5)
        UNION ALL
        (SELECT {job_columns}
           FROM {schema}.jobs j
          WHERE j.state = 'cancelled' AND 'cancelled' = ANY ($2)
            AND j.id < $1 {filters}
          ORDER BY j.id DESC
          LIMIT $5)
        UNION ALL
        (SELECT {job_columns}
           FROM {schema}.jobs j
          WHERE j.state = 'dead' AND 'dead' = ANY ($2)
            AND j.id < $1 {filters}
          ORDER BY j.id DESC
          LIMIT $5)) page
 ORDER BY page.id DESC
 LIMIT $5
