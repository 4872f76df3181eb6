-- Removes the rate limit named $1; returns whether there was one.
DELETE FROM {schema}.rate_limits WHERE name = $1
