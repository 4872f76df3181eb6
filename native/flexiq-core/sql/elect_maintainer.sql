-- Whether this session may run the schema's maintenance (its role may delete jobs and release
-- their keys), and whether it now does: a session-level advisory lock, keyed by the schema name
-- so that each schema elects its own. A session that may not never takes the lock, so that it
-- cannot keep out one that may. The elected session keeps the lock until it closes; a process
-- that dies closes its session and so frees the lock for the next try.
SELECT may_maintain,
       CASE WHEN may_maintain
            THEN pg_try_advisory_lock(hashtextextended('flexiq.maintenance.{schema}', 0))
            ELSE false END AS elected
  FROM (SELECT has_table_privilege('{schema}.jobs', 'DELETE')
               AND has_column_privilege('{schema}.jobs', 'key_held', 'UPDATE') AS may_maintain) p
