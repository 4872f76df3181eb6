-- A batch without keys: one plain insert. Rows take ids in input order.
INSERT INTO {schema}.jobs
SELECT r.*
  FROM unnest($1::bytea[], $2::jsonb[]) WITH ORDINALITY AS t(payload, request, ord),
       {schema}.job_row(nextval('{schema}.jobs_id_seq'), t.payload, t.request, NULL, NULL, NULL) r
 ORDER BY t.ord
RETURNING id
