-- The schema and its bookkeeping: which versioned migrations ran, and which text of each
-- definition (function or trigger) was applied last, by checksum.
CREATE SCHEMA IF NOT EXISTS {schema};
CREATE TABLE IF NOT EXISTS {schema}.schema_migrations (
    version     integer     PRIMARY KEY,
    description text        NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS {schema}.schema_definitions (
    name       text        PRIMARY KEY,
    -- SHA-256 of the definition file as shipped, before the schema name is filled in.
    checksum   bytea       NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
