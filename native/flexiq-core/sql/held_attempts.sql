-- The jobs of running attempts ($1 job ids, $2 attempt numbers) that still hold them, locked
-- in id order, so that statements over overlapping jobs (completions, lease extensions,
-- give-backs) wait for each other instead of deadlocking. Put into those statements at
-- {held_attempts}, with {rescued_too} true where an attempt whose lease passed still counts
-- while no later attempt started (its outcome is recorded late; see rescue_expired.sql).
--
-- The attempts are taken in id order and each job is looked up and locked by its own id. As a
-- join, planned on an empty table, reading the whole primary key in its order looked cheaper
-- than one lookup per id; naming the ids as an index condition as well made PostgreSQL compare
-- every job with every id.
SELECT h.id
  FROM (SELECT t.id, t.attempt FROM unnest($1::bigint[], $2::integer[]) AS t(id, attempt)
         ORDER BY t.id OFFSET 0) t,
       LATERAL (SELECT j.id FROM {schema}.jobs j
                 WHERE j.id = t.id AND j.attempt = t.attempt
                   AND (j.state = 'running'
                        OR ({rescued_too} AND j.rescued_attempt = t.attempt
                            AND j.state IN ('retryable', 'dead')))
                   FOR UPDATE OF j) h
