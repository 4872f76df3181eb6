-- Jobs by queue and state, for gauges: the states that come and go (pending and running) and the
-- dead letters, each read through its partial index (jobs_due, jobs_leases, jobs_dead), so
-- that finished jobs, however many, are never read. A job runs exactly while it has a lease.
SELECT j.queue, j.state, count(*) AS count
  FROM {schema}.jobs j
 WHERE j.state IN ('available', 'scheduled', 'retryable')
 GROUP BY j.queue, j.state
UNION ALL
SELECT j.queue, 'running', count(*)
  FROM {schema}.jobs j
 WHERE j.lease_expires_at > '-infinity'   -- a range, so that even a never-analyzed table
 GROUP BY j.queue                         -- is read through jobs_leases, not scanned
UNION ALL
SELECT j.queue, 'dead', count(*)
  FROM {schema}.jobs j
 WHERE j.state = 'dead'
 GROUP BY j.queue
