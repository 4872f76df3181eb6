-- Wake-ups: statements that make jobs due now announce their queues on the schema's channel,
-- once per queue; PostgreSQL delivers the announcement when the statement's transaction commits.
-- Returns how many queues were announced.
CREATE OR REPLACE FUNCTION {schema}.announce(p_queues text[]) RETURNS integer
LANGUAGE sql AS $$
    SELECT count(pg_notify('{channel}', q))::integer FROM unnest(p_queues) AS q
$$;

-- Earlier versions announced every insert from a trigger, inside the inserting transaction:
-- concurrent enqueues then committed one at a time. Enqueues now announce for themselves.
DROP TRIGGER IF EXISTS jobs_announce_inserted ON {schema}.jobs;
DROP FUNCTION IF EXISTS {schema}.announce_inserted();
