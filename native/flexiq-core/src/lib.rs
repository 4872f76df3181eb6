//! FlexiQ's core: the cross-binding dedup key recipe, input validation, the schema and every
//! PostgreSQL statement. Nothing in this crate knows about JNI; the bridge crate converts
//! arguments and maps [`Error`] to Java exceptions.

mod announcer;
mod batch;
pub mod caller;
pub mod canonical;
mod canonical_scan;
pub mod client;
pub mod cron;
pub mod enqueue;
pub mod error;
mod grants;
mod grouping;
pub mod jobs;
pub mod keys;
pub mod maintenance;
mod pool;
pub mod positions;
pub mod queries;
mod rate_limits;
pub mod recipe;
pub mod request;
pub mod running;
pub mod schema;
pub mod statement;
mod tls;
pub mod validate;
mod wakeups;

pub use client::{Client, ClientConfig};
pub use enqueue::{EnqueueRow, Enqueued, NonReplaceable, Outcome, PendingEnqueue, PreparedEnqueue};
pub use error::{Conflict, Error, Result};
pub use grants::Grant;
pub use jobs::{JobCount, JobInfo, Redrive};
pub use maintenance::{Maintained, MaintenanceReport, Retention};
pub use queries::{JobPage, JobQuery, StoredPayload, Throughput};
pub use rate_limits::RateTarget;
pub use request::{Encoded, Flow, JobRequest, RetryPolicy, Schedule};
pub use running::{Attempt, ClaimedJob, FailedAttempt, RescuedJob};
pub use statement::Param;
