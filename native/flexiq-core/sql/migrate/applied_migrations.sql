-- The versions of the migrations the schema has applied.
SELECT version FROM {schema}.schema_migrations
