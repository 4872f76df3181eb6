-- A job's payload as stored: the bytes its enqueue serialized, or what its payload codec
-- (payload_codec, NULL for none) made of them; with its task, which a codec may check.
SELECT j.task, j.payload, j.payload_codec FROM {schema}.jobs j WHERE j.id = $1
