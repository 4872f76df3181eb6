-- Pauses queue $1 (see functions/queue_pauses.sql); whether it was running until now.
SELECT {schema}.pause_queue($1)
