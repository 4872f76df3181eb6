-- Wake-ups: statements that make jobs due now announce their queues on the schema's channel,
-- once per queue; PostgreSQL delivers the announcement when the statement's transaction commits.
-- Returns how many queues were announced.
CREATE OR REPLACE FUNCTION {schema}.announce(p_queues text[]) RETURNS integer
LANGUAGE sql AS $$
    SELECT count(pg_notify('{channel}', q))::integer FROM unnest(p_queues) AS q
$$;
