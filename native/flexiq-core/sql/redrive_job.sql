-- Redrives dead-lettered job $1 under redrive key digest $2 (preview $3); see the function
-- redrive (functions/redrive.sql) for its outcomes.
SELECT outcome, holder, state FROM {schema}.redrive($1, $2, $3)
