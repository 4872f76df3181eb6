-- Redrives one batch of a bulk redrive: each dead job of the batch bulk_batch.sql selects,
-- through the function redrive, under a redrive key of its own, the SHA-256 of the bulk
-- action's key $8, a colon and the job's id (preview $9). Running the same bulk redrive again
-- finds each job's key recorded and changes nothing (a job whose key another active job holds
-- is left, as a single redrive leaves it). The batches are small: each redrive is a
-- subtransaction, and a transaction of many more than 64 of them slows every snapshot.
-- Returns the batch's smallest id, how many jobs it selected and how many it redrove.
WITH batch AS MATERIALIZED (
    {bulk_batch}
), redriven AS (
    SELECT r.outcome
      FROM batch b,
           LATERAL {schema}.redrive(b.id, sha256(convert_to($8 || ':' || b.id, 'UTF8')), $9) r
)
SELECT (SELECT min(b.id) FROM batch b) AS last_id,
       (SELECT count(*) FROM batch b) AS selected,
       (SELECT count(*) FROM redriven r WHERE r.outcome = 'redriven') AS changed
