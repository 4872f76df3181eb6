-- Removes the registration of worker $1, which is stopping.
DELETE FROM {schema}.workers WHERE id = $1
