//! FlexiQ's core: the cross-binding dedup key recipe, input validation, the schema and every
//! PostgreSQL statement. Nothing in this crate knows about JNI; the bridge crate converts
//! arguments and maps [`Error`] to Java exceptions.
//!
//! A [`Client`] holds a pool and a schema, and one module per role that uses them:
//! [`producer`] (enqueue), [`worker_store`] (claims, leases, outcomes), [`operations`] (jobs,
//! queries, rate limits, grants), [`maintenance`] and [`wakeups`]. The roles share only the
//! pool, the schema and the modules below them (requests, statements, errors, validation).

pub mod caller;
pub mod canonical;
pub mod client;
pub mod cron;
pub mod error;
pub mod host;
pub mod keys;
pub mod maintenance;
pub mod operations;
mod pool;
pub mod producer;
pub mod recipe;
pub mod request;
pub mod schema;
pub mod server;
pub mod statement;
mod tls;
pub mod validate;
pub mod wakeups;
pub mod worker_store;

pub use client::{Client, ClientConfig};
pub use error::{Conflict, Error, Result};
pub use maintenance::{Maintained, MaintenanceReport, Retention};
pub use operations::attempts::AttemptRecord;
pub use operations::bulk::{BulkAction, BulkOutcome, JobFilter};
pub use operations::grants::Grant;
pub use operations::jobs::{JobCount, JobInfo, Redrive};
pub use operations::queries::{JobPage, JobQuery, StoredPayload, Throughput};
pub use operations::queues::PausedQueue;
pub use operations::rate_limits::RateTarget;
pub use operations::schedules::{DeclaredSchedule, ScheduleDeclaration};
pub use operations::workers::RegisteredWorker;
pub use producer::{
    EnqueueRow, Enqueued, NonReplaceable, Outcome, PendingEnqueue, PreparedEnqueue,
};
pub use request::{Encoded, Flow, JobRequest, RetryPolicy, Schedule};
pub use statement::Param;
pub use worker_store::registration::Registration;
pub use worker_store::{
    Attempt, ClaimedJob, Completed, FailedAttempt, JobAttempt, RescuedJob, TransactionStatements,
    MAX_CHECKPOINT_BYTES,
};
