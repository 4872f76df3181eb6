-- One keyed call answered by reading alone: the job of a live holder of the key that was
-- accepted with an equivalent request (the comparison of enqueue_one), or no row. Parameters as
-- for enqueue_keyed.sql, but each one value rather than an array (tags and flow as text); the
-- codec, preview and rank play no part. A client sends it first while its calls keep replaying
-- (see the producer's lanes and calls modules). No row sends the call on as usual, where the unique index
-- decides; a top-level read rather than the function's, since PostgreSQL runs it on its cached
-- plan without entering PL/pgSQL.
-- Payloads stored without a codec's digest, on both sides, are compared byte for byte: the
-- same answer as their SHA-256s, without hashing the held job's payload on every replay.
SELECT j.id
  FROM {schema}.jobs j
 WHERE j.key_held AND j.key_scope = $18::text AND j.key_digest = $19::bytea
   AND (j.held_until IS NULL OR j.held_until > now())
   AND CASE WHEN j.payload_digest IS NULL AND $17::bytea IS NULL THEN j.payload = $1::bytea
            ELSE {schema}.payload_fingerprint(j.payload, j.payload_digest)
                 = {schema}.payload_fingerprint($1::bytea, $17::bytea) END
   AND (j.queue, j.task, j.priority,
        j.requested_run_at, j.requested_delay_ms, j.max_attempts, j.retry_initial_ms,
        j.retry_max_ms, j.retry_multiplier, j.retry_jitter, j.timeout_ms, j.tags,
        j.key_retention_ms, j.flow)
       IS NOT DISTINCT FROM
       ($2::text, $3::text, $4::integer,
        {schema}.micros_to_timestamptz($5::bigint), $6::bigint,
        $7::integer, $8::bigint, $9::bigint,
        $10::double precision, $11::double precision, $12::bigint,
        $13::jsonb, $14::bigint, $15::jsonb)
