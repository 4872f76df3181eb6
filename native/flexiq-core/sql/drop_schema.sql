-- Removes the schema with every job, checkpoint, function and trigger in it: uninstalling.
DROP SCHEMA IF EXISTS {schema} CASCADE
