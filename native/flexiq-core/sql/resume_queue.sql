-- Resumes queue $1 and wakes its idle workers (see functions/queue_pauses.sql); whether it was
-- paused.
SELECT {schema}.resume_queue($1)
