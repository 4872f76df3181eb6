-- Where jobs $1 stand now: their attempt number and state. Read only when an attempt's outcome
-- was refused, to say why (a later attempt started, or PostgreSQL forgot the attempt's claim).
SELECT j.id, j.attempt, j.state
  FROM {schema}.jobs j
 WHERE j.id = ANY ($1)
