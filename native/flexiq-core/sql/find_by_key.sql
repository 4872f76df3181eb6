-- The job a key names in scope $1, by its SHA-256 $2: the job holding it (jobs_held_key), else
-- the latest job that held it (jobs_released_key). The raw key is never sent.
SELECT k.*
  FROM ((SELECT {job_columns}, 0 AS rank
           FROM {schema}.jobs j
          WHERE j.key_held AND j.key_scope = $1 AND j.key_digest = $2)
        UNION ALL
        (SELECT {job_columns}, 1
           FROM {schema}.jobs j
          WHERE NOT j.key_held AND j.key_scope = $1 AND j.key_digest = $2
          ORDER BY j.id DESC
          LIMIT 1)) k
 ORDER BY k.rank
 LIMIT 1
