-- New jobs due now announce their queues. A replay inserts nothing and so announces nothing.
CREATE OR REPLACE FUNCTION {schema}.announce_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM {schema}.announce(ARRAY(SELECT DISTINCT i.queue FROM inserted i WHERE i.state = 'available'));
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER jobs_announce_inserted AFTER INSERT ON {schema}.jobs
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.announce_inserted();
