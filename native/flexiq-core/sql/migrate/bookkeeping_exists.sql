-- Whether the schema has its bookkeeping tables: a schema never migrated has neither.
SELECT to_regclass('{schema}.schema_migrations') IS NOT NULL
   AND to_regclass('{schema}.schema_definitions') IS NOT NULL
