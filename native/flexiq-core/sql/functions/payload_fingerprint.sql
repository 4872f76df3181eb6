-- What a replay's payload is compared on: the digest a payload codec's binding stored beside
-- the encoded payload (p_digest, taken over the serialized payload before encoding, since two
-- encodings of one payload differ), or else the SHA-256 of the payload stored as serialized.
-- So a replay matches across a codec's keys, and a job stored before a codec was set matches
-- its replay through a codec whose digest is SHA-256.
CREATE OR REPLACE FUNCTION {schema}.payload_fingerprint(p_payload bytea, p_digest bytea)
RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(p_digest, sha256(p_payload))
$$;
