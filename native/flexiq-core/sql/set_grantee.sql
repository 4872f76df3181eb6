-- Names the role that grant_producer.sql or grant_worker.sql, run next in the same
-- transaction, grants to ($1; the grant quotes it).
SELECT set_config('flexiq.grantee', $1, true)
