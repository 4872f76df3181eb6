//! A job's attempts, each with its start, end, the process that ran it, its outcome and error
//! (see migration 14: failed and rescued attempts are kept as they end; the running or
//! completing one is the job row's own).

use super::Operations;
use crate::error::Result;
use crate::pool::Repeat;

/// One attempt of a job.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct AttemptRecord {
    pub attempt: i32,
    /// µs since the epoch.
    pub started_at_us: i64,
    /// µs since the epoch; `None` while it runs.
    pub finished_at_us: Option<i64>,
    /// The process (`host:pid`) whose claim started it; `None` for jobs claimed before the
    /// history was kept.
    pub worker: Option<String>,
    /// `running`, `completed`, `failed` or `lease expired`.
    pub outcome: String,
    pub error: Option<String>,
}

impl Operations {
    /// The attempts of job `id`, oldest first; empty for a job that never started or does not
    /// exist.
    pub async fn attempts(&self, id: i64) -> Result<Vec<AttemptRecord>> {
        let rows = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.list_attempts)
                    .bind(id)
                    .fetch_all(c)
                    .await
            })
            .await??;
        Ok(rows)
    }
}
