-- Enqueues schedule $1 now, through the SQL function enqueue, with the payload and options it
-- was declared with, under key digest $2 (preview $3) in the schedules' scope, kept for $4 ms:
-- the key of a tick at the instant the trigger names, so that the same trigger twice enqueues
-- once. No row: no such schedule, or one declared without what a trigger needs.
SELECT e.job_id, e.outcome
  FROM {schema}.schedules s,
       {schema}.enqueue(s.task, s.payload, $2, $3, 'flexiq.schedule',
                        s.options || jsonb_build_object('queue', s.queue, 'keyRetentionMs', $4)) e
 WHERE s.name = $1 AND s.payload IS NOT NULL
