-- Microseconds since the epoch as a timestamptz, exactly. A bigint times an interval goes
-- through float8, which holds whole microseconds only up to 2^53 (about the year 2255); whole
-- hours and the microseconds left over are each small enough that every product stays exact
-- from the year 1 to 9999. Only time is added, never days or months, so the session's time
-- zone plays no part.
CREATE OR REPLACE FUNCTION {schema}.micros_to_timestamptz(p_micros bigint) RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT timestamptz 'epoch' + (p_micros / 3600000000) * interval '1 hour'
                               + (p_micros % 3600000000) * interval '1 microsecond'
$$;
