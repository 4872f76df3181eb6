-- Frees the schema's maintenance lock before the session closes: the server frees a closed
-- session's locks only once its backend has exited, which another client's next try may beat.
SELECT pg_advisory_unlock(hashtextextended('flexiq.maintenance.{schema}', 0))
