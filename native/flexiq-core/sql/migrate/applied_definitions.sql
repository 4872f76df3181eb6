-- Each definition's name and the checksum of its text as last applied.
SELECT name, checksum FROM {schema}.schema_definitions
