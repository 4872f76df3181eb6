-- The functions that the definitions applied in this transaction superseded: of every function
-- name this transaction created or replaced, the overloads it did not write. A definition whose
-- parameters changed (a field added to the request) creates its function beside the old one,
-- which is then dropped by its signature, as returned here.
SELECT p.oid::regprocedure::text
  FROM pg_catalog.pg_proc p
 WHERE p.pronamespace = '{schema}'::regnamespace
   AND p.xmin::text <> (pg_current_xact_id()::text::bigint % 4294967296)::text
   AND EXISTS (SELECT FROM pg_catalog.pg_proc q
                WHERE q.pronamespace = p.pronamespace AND q.proname = p.proname
                  AND q.xmin::text = (pg_current_xact_id()::text::bigint % 4294967296)::text)
