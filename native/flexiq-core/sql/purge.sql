-- Deletes job $1 unless it is running; its key goes with its row, whatever the retention, and
-- its checkpoints and redrive keys go by cascade.
DELETE FROM {schema}.jobs WHERE id = $1 AND state <> 'running'
