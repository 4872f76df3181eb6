-- Dead letters by queue: operators and gauges count them without reading the finished jobs,
-- which only grow. Only rows entering or leaving 'dead' touch it.
CREATE INDEX jobs_dead ON {schema}.jobs (queue) WHERE state = 'dead';
