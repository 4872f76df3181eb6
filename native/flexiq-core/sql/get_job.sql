-- One job as operators see it.
SELECT {job_columns}
  FROM {schema}.jobs j
 WHERE j.id = $1
