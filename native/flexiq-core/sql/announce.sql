-- Announces the queues of jobs an enqueue on FlexiQ's own connections made, after its commit.
-- A transaction that only notifies writes no WAL, so its commit waits on no disk.
SELECT {schema}.announce($1::text[])
