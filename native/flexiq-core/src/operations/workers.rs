//! The registered workers, as operators see them: which are alive, where, running what (see
//! `worker_store::registration`).

use super::Operations;
use crate::error::Result;
use crate::pool::Repeat;

/// A registered worker and its last heartbeat.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RegisteredWorker {
    pub id: String,
    pub name: String,
    pub host: String,
    pub pid: i64,
    pub queues: Vec<String>,
    pub tasks: Vec<String>,
    pub concurrency: i32,
    pub lease_ms: i64,
    /// The FlexiQ version it runs.
    pub version: String,
    /// Microseconds since the Unix epoch.
    pub started_at_us: i64,
    /// Microseconds since the Unix epoch.
    pub heartbeat_at_us: i64,
}

impl Operations {
    /// Every registered worker, by host, process and start.
    pub async fn workers(&self) -> Result<Vec<RegisteredWorker>> {
        let workers = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.list_workers)
                    .fetch_all(c)
                    .await
            })
            .await??;
        Ok(workers)
    }
}
