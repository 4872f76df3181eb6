-- Whether this session now runs the schema's maintenance: a session-level advisory lock, keyed
-- by the schema name so that each schema elects its own. The elected session keeps it until it
-- closes; a process that dies closes its session and so frees the lock for the next try.
SELECT pg_try_advisory_lock(hashtextextended('flexiq.maintenance.{schema}', 0))
