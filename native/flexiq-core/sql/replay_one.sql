-- One keyed call answered by reading alone: the job of a live holder of the key that was
-- accepted with an equivalent request (the comparison of enqueue_keyed), or no row. The
-- parameters are the request's fields, each one value rather than an array. A client sends it
-- first while its calls keep replaying (see the producer's lanes and calls modules). No row
-- sends the call on as usual, where the unique index decides; a top-level read rather than
-- the function's, since PostgreSQL runs it on its cached plan without entering PL/pgSQL.
-- Payloads stored without a codec's digest, on both sides, are compared byte for byte: the
-- same answer as their SHA-256s, without hashing the held job's payload on every replay.
SELECT j.id
  FROM {schema}.jobs j
 WHERE j.key_held AND j.key_scope = {param:scope}::text AND j.key_digest = {param:key_digest}::bytea
   AND (j.held_until IS NULL OR j.held_until > now())
   AND CASE WHEN j.payload_digest IS NULL AND {param:payload_digest}::bytea IS NULL
            THEN j.payload = {param:payload}::bytea
            ELSE {schema}.payload_fingerprint(j.payload, j.payload_digest)
                 = {schema}.payload_fingerprint({param:payload}::bytea,
                                                {param:payload_digest}::bytea) END
   AND ({compared_stored:j.}) IS NOT DISTINCT FROM ({compared_requested:$})
