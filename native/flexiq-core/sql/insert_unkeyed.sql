-- A batch without keys: one plain insert. Ids are drawn in array order, so ascending ids are
-- input order.
INSERT INTO {schema}.jobs
SELECT n.*
  FROM {schema}.new_jobs(
           ARRAY(SELECT nextval('{schema}.jobs_id_seq') FROM generate_series(1, cardinality($1::bytea[]))),
           $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb[], $14,
           NULL, NULL, NULL) n
RETURNING id
