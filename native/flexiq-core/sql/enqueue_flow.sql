-- One debounced or throttled job (see enqueue_flow); parameters as for enqueue_one_keyed.sql
-- without the rank, each once and in order, so that the statement also runs with JDBC's
-- positional placeholders.
--
-- {announce}: as for enqueue_one_keyed.sql.
SELECT o.job_id, o.created, o.conflict::text, o.decision
  FROM {schema}.enqueue_flow($1::bytea[], $2::text[], $3::text[], $4::integer[], $5::bigint[],
           $6::bigint[], $7::integer[], $8::bigint[], $9::bigint[], $10::double precision[],
           $11::double precision[], $12::bigint[], $13::jsonb[], $14::bigint[], $15::jsonb[],
           $16::text[], $17::bytea[], $18::text[], $19::bytea[], $20::text[], {announce}) o
