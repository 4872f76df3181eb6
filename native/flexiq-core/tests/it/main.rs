//! The integration tests of the core, against a real PostgreSQL: one test binary, so that the
//! workspace links it once.

mod attempt_history;
mod bulk;
mod common;
mod counts;
mod credentials;
mod declared_schedules;
mod definitions;
mod enqueue;
mod failover;
mod flow;
mod grants;
mod grouping;
mod late_outcomes;
mod lifecycle;
mod limits;
mod maintenance;
mod migrations;
mod outage;
mod pauses;
mod payload_codec;
mod pgbouncer;
mod plans;
mod pool;
mod queries;
mod raw_keys;
mod redrive_and_checkpoints;
mod registrations;
mod running;
mod schedule_vectors;
mod sql_producer;
mod tls;
mod vectors;
