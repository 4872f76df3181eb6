-- A batch without keys: one plain insert. Ids are drawn in array order, so ascending ids are
-- input order. Rows have the shape enqueue_keyed returns. Each parameter appears once, in
-- order, so that the statement also runs with JDBC's positional placeholders.
INSERT INTO {schema}.jobs
SELECT n.*
  FROM (SELECT $1::bytea[] AS payload) p,
       LATERAL {schema}.new_jobs(
           ARRAY(SELECT nextval('{schema}.jobs_id_seq') FROM generate_series(1, cardinality(p.payload))),
           p.payload, $2::text[], $3::text[], $4::integer[], $5::bigint[], $6::bigint[],
           $7::integer[], $8::bigint[], $9::bigint[], $10::double precision[],
           $11::double precision[], $12::bigint[], $13::jsonb[], $14::bigint[], NULL, NULL, NULL) n
RETURNING id, true, NULL::text
