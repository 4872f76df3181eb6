-- One keyed job (see enqueue_one); parameters as for enqueue_keyed.sql, each once and in order,
-- so that the statement also runs with JDBC's positional placeholders.
--
-- {announce}: whether a new job due now is announced within the statement, so that PostgreSQL
-- delivers the wake-up when the caller's transaction commits; FlexiQ's own connections announce
-- after the commit instead, but for a single enqueue that no other overlaps.
SELECT o.job_id, o.created, o.conflict::text, NULL::text AS decision
  FROM {schema}.enqueue_one($1::bytea[], $2::text[], $3::text[], $4::integer[], $5::bigint[],
           $6::bigint[], $7::integer[], $8::bigint[], $9::bigint[], $10::double precision[],
           $11::double precision[], $12::bigint[], $13::jsonb[], $14::bigint[], $15::jsonb[],
           $16::text[], $17::bytea[], $18::text[], $19::bytea[], $20::text[], $21::integer[],
           {announce}) o
