-- How many jobs a bulk action's filter selects now (see bulk_batch.sql; $1 the largest id, $5
-- NULL), shown to an operator before they confirm it.
SELECT count(*) FROM ({bulk_batch}) selected
