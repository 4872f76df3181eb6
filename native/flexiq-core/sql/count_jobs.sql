-- Jobs by queue and state, each read through a partial index, so that finished jobs, however
-- many, are never all read: the states that come and go (jobs_due, jobs_leases) and the dead
-- letters (jobs_dead), all of them; completed and cancelled jobs, those that finished within
-- the last $1 milliseconds (jobs_finished_at). A job runs exactly while it has a lease.
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
UNION ALL
SELECT j.queue, j.state, count(*)
  FROM {schema}.jobs j
 WHERE j.finished_at > now() - $1 * interval '1 millisecond'
   AND j.state IN ('completed', 'cancelled')
 GROUP BY j.queue, j.state
