-- Wake-ups: statements that make jobs due now announce their queues on the schema's channel,
-- once per queue; PostgreSQL delivers the announcement when the statement's transaction commits.
-- Returns how many queues were announced.
--
-- PL/pgSQL, whose plan a session keeps: PostgreSQL cannot inline a SQL function that reads from
-- unnest, so as one it parsed and planned its body on every call (announce.sql runs after most
-- enqueues: 22,000-25,000 calls/s from 4 pgbench clients as SQL, 29,500-39,400 as PL/pgSQL).
CREATE OR REPLACE FUNCTION {schema}.announce(p_queues text[]) RETURNS integer
LANGUAGE plpgsql AS $$
BEGIN
    RETURN (SELECT count(pg_notify('{channel}', q))::integer FROM unnest(p_queues) AS q);
END
$$;

-- Earlier versions announced every insert from a trigger, inside the inserting transaction:
-- concurrent enqueues then committed one at a time. Enqueues now announce for themselves.
DROP TRIGGER IF EXISTS jobs_announce_inserted ON {schema}.jobs;
DROP FUNCTION IF EXISTS {schema}.announce_inserted();
