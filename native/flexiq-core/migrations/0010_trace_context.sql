-- Tracing: the trace context of the span that enqueued each job (its propagator's carrier
-- entries, a JSON object), so that the job's attempts continue that trace. Not part of the
-- request a replay is compared on. Metadata only: no row is rewritten.
ALTER TABLE {schema}.jobs ADD COLUMN trace_context jsonb;
