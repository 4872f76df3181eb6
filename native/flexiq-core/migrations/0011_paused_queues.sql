-- Paused queues: while a queue has a row here, no claim starts its jobs; they wait, enqueues
-- and replays go on as ever, and running jobs finish. Set and cleared through pause_queue and
-- resume_queue (functions/queue_pauses.sql), which every claim keeps in step with.
CREATE TABLE {schema}.paused_queues (
    queue     text        PRIMARY KEY,
    paused_at timestamptz NOT NULL DEFAULT now()
);
