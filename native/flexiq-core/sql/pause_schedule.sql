-- Pauses ($2) or resumes (not $2) schedule $1; whether that changed it.
UPDATE {schema}.schedules
   SET paused_at = CASE WHEN $2 THEN now() END
 WHERE name = $1 AND (paused_at IS NOT NULL) <> $2
