-- Payload codecs (encryption at rest). A payload a codec encoded is stored as the codec made
-- it, beside the codec's id, which a worker decodes by, and the digest of the serialized
-- payload, which replays are compared by (payload_fingerprint). Both are NULL for a payload
-- stored as serialized.
ALTER TABLE {schema}.jobs
    ADD COLUMN payload_codec text,
    ADD COLUMN payload_digest bytea;

-- Every row so far has neither; NOT VALID spares a large table the scan that would show it.
ALTER TABLE {schema}.jobs ADD CONSTRAINT jobs_payload_codec_digested
    CHECK ((payload_codec IS NULL) = (payload_digest IS NULL)) NOT VALID;
