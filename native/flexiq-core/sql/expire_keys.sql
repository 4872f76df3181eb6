-- Releases the keys of finished jobs whose retention window has closed (index
-- jobs_key_expiry). Enqueue takes such keys over anyway; this keeps the held-key index small.
UPDATE {schema}.jobs SET key_held = false WHERE key_held AND held_until <= now()
