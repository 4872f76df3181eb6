-- Lets one migration of the schema in at a time, until its transaction ends; the schema name
-- is a plain identifier, so it can sit in the literal.
SELECT pg_advisory_xact_lock(hashtextextended('flexiq.migrate.{schema}', 0))
