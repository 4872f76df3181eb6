//! Reading jobs and the state changes that move them out of the active states.

use serde::Serialize;

use crate::client::Client;
use crate::error::Result;

/// Pending states: ready, scheduled or awaiting retry.
const PENDING: &[&str] = &["available", "scheduled", "retryable"];
const PENDING_OR_RUNNING: &[&str] = &["available", "scheduled", "retryable", "running"];

/// A job as operators see it. Times are microseconds since the Unix epoch.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow)]
#[serde(rename_all = "camelCase")]
pub struct JobInfo {
    pub id: i64,
    pub queue: String,
    pub task: String,
    pub state: String,
    pub priority: i32,
    pub attempt: i32,
    pub max_attempts: i32,
    pub tags: Vec<String>,
    pub run_at: i64,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub key_scope: Option<String>,
    pub key_digest: Option<String>,
    pub key_preview: Option<String>,
    /// Whether the job's key binding still holds (the job is active, or retention is open).
    pub key_held: bool,
    pub last_error: Option<String>,
}

impl Client {
    /// The job with this id, if it exists.
    pub async fn get_job(&self, id: i64) -> Result<Option<JobInfo>> {
        let job = self
            .pool
            .run(async |c| {
                sqlx::query_as(&self.sql.get_job)
                    .bind(id)
                    .fetch_optional(c)
                    .await
            })
            .await??;
        Ok(job)
    }

    /// Cancels a pending job and releases its key. False when the job is not pending.
    pub async fn cancel(&self, id: i64) -> Result<bool> {
        self.finish(id, PENDING, "cancelled", None, None).await
    }

    /// Completes a pending or running job without running it (work done out of band) and
    /// releases its key, unless a retention window holds it.
    pub async fn mark_completed(&self, id: i64) -> Result<bool> {
        self.finish(id, PENDING_OR_RUNNING, "completed", None, None)
            .await
    }

    /// Moves a job from one of `from` to `state`; with `attempt`, only while it runs that
    /// attempt.
    pub(crate) async fn finish(
        &self,
        id: i64,
        from: &[&str],
        state: &str,
        error: Option<&str>,
        attempt: Option<i32>,
    ) -> Result<bool> {
        let moved = self
            .pool
            .run(async |c| {
                sqlx::query(&self.sql.finish_job)
                    .bind(id)
                    .bind(from)
                    .bind(state)
                    .bind(error)
                    .bind(attempt)
                    .execute(c)
                    .await
            })
            .await??;
        Ok(moved.rows_affected() == 1)
    }

    /// Deletes a job that is not running, and with it its key binding, whatever the retention.
    pub async fn purge(&self, id: i64) -> Result<bool> {
        let purged = self
            .pool
            .run(async |c| sqlx::query(&self.sql.purge).bind(id).execute(c).await)
            .await??;
        Ok(purged.rows_affected() == 1)
    }

    /// Releases the keys of finished jobs whose retention has passed; returns how many. New
    /// enqueues take such keys over anyway; this keeps the index of held keys small.
    pub async fn expire_keys(&self) -> Result<u64> {
        let expired = self
            .pool
            .run(async |c| sqlx::query(&self.sql.expire_keys).execute(c).await)
            .await??;
        Ok(expired.rows_affected())
    }
}
