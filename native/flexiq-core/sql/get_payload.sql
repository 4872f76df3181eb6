-- A job's payload as stored: the serialized bytes its enqueue sent.
SELECT j.payload FROM {schema}.jobs j WHERE j.id = $1
