-- Schedules as the processes declaring them describe them, for operators: each declaring
-- process writes its schedule's row at every tick (seen_at says when one last did). payload and
-- options (the SQL function enqueue's form) let any client trigger the schedule now; they are
-- NULL when the declaration cannot be repeated that way (a payload codec encrypts its payloads,
-- or its options use flow control). A paused schedule's ticks are not enqueued.
CREATE TABLE {schema}.schedules (
    name        text        PRIMARY KEY,
    cron        text        NOT NULL,
    zone        text        NOT NULL,
    task        text        NOT NULL,
    queue       text        NOT NULL,
    payload     bytea,
    options     jsonb,
    declared_at timestamptz NOT NULL DEFAULT now(),
    seen_at     timestamptz NOT NULL DEFAULT now(),
    paused_at   timestamptz
);
