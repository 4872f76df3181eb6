-- Sets the rate limit named $1 ('queue:<name>' or 'key:<concurrency key>') to $2 starts within
-- $3 milliseconds. The starts it already recorded still count; a smaller limit keeps only as
-- many of them as it allows.
INSERT INTO {schema}.rate_limits (name, starts, period_ms)
VALUES ($1, $2, $3)
    ON CONFLICT (name) DO UPDATE
   SET starts = excluded.starts, period_ms = excluded.period_ms,
       recent = {schema}.rate_limits.recent[1:excluded.starts]
