-- Deletes one batch of a bulk purge: the jobs of the batch bulk_batch.sql selects, unless one
-- started running meanwhile; keys, checkpoints and redrive keys go with them (see purge.sql).
-- Returns the batch's smallest id, how many jobs it selected and how many it deleted.
WITH batch AS MATERIALIZED (
    {bulk_batch}
), purged AS (
    DELETE FROM {schema}.jobs j
     WHERE j.id = ANY (ARRAY(SELECT b.id FROM batch b)) AND j.state <> 'running'
    RETURNING j.id
)
SELECT (SELECT min(b.id) FROM batch b) AS last_id,
       (SELECT count(*) FROM batch b) AS selected,
       (SELECT count(*) FROM purged) AS changed
