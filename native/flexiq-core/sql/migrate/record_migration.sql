-- Records migration $1 (description $2) as applied.
INSERT INTO {schema}.schema_migrations (version, description) VALUES ($1, $2)
