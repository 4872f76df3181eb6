-- Records definition $1 as applied with the text of checksum $2.
INSERT INTO {schema}.schema_definitions (name, checksum) VALUES ($1, $2)
    ON CONFLICT (name) DO UPDATE SET checksum = excluded.checksum, applied_at = now()
