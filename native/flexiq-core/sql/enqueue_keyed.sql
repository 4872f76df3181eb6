-- A batch with keys: one call of enqueue_keyed. The first fourteen parameters are the job
-- columns, then come each key's scope, digest and preview, and each entry's rank in the
-- caller's order. Each parameter appears once, in order, so that the statement also runs with
-- JDBC's positional placeholders; the casts let a driver send any array type.
SELECT job_id, created, conflict::text
  FROM {schema}.enqueue_keyed($1::bytea[], $2::text[], $3::text[], $4::integer[], $5::bigint[],
                              $6::bigint[], $7::integer[], $8::bigint[], $9::bigint[],
                              $10::double precision[], $11::double precision[], $12::bigint[],
                              $13::jsonb[], $14::bigint[], $15::text[], $16::bytea[], $17::text[],
                              $18::integer[])
