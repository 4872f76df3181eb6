-- Announces the queues of jobs an enqueue on FlexiQ's own connections made, after its commit.
-- A notification takes a transaction id, so its commit writes a commit record; it need not
-- wait for that record's flush (the jobs it announces are flushed already, and a lost
-- announcement costs latency, never a job), so this transaction commits asynchronously: an
-- announcement per millisecond would otherwise add a disk flush to every few enqueues.
SELECT {schema}.announce($1::text[]) FROM set_config('synchronous_commit', 'off', true)
