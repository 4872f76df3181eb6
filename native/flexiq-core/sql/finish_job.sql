-- Moves job $1 from one of the states $2 to state $3 (with error $4) and releases its key in
-- the same statement: at once, or, under an open retention window, when the window closes.
UPDATE {schema}.jobs
   SET state = $3, finished_at = now(), lease_expires_at = NULL,
       last_error = coalesce($4, last_error),
       key_held = key_held AND coalesce(retain_until > now(), false),
       held_until = CASE WHEN key_held AND retain_until > now() THEN retain_until END
 WHERE id = $1 AND state = ANY ($2)
