-- Maintenance: removes the registrations of workers that have not heartbeat for a whole lease
-- (they heartbeat every third of it); returns how many.
DELETE FROM {schema}.workers w
 WHERE w.heartbeat_at < now() - w.lease_ms * interval '1 millisecond'
