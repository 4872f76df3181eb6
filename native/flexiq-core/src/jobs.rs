//! Reading jobs and the state changes that move them out of the active states.

use std::time::Duration;

use serde::Serialize;

use crate::client::Client;
use crate::error::Result;

/// Pending states: ready, scheduled or awaiting retry.
const PENDING: &[&str] = &["available", "scheduled", "retryable"];
const PENDING_OR_RUNNING: &[&str] = &["available", "scheduled", "retryable", "running"];
const RUNNING: &[&str] = &["running"];

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

/// A job handed to a worker.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ClaimedJob {
    pub id: i64,
    pub queue: String,
    pub task: String,
    pub payload: Vec<u8>,
    pub attempt: i32,
    pub max_attempts: i32,
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
        self.finish(id, PENDING, "cancelled", None).await
    }

    /// Completes a pending or running job without running it (work done out of band) and
    /// releases its key, unless a retention window holds it.
    pub async fn mark_completed(&self, id: i64) -> Result<bool> {
        self.finish(id, PENDING_OR_RUNNING, "completed", None).await
    }

    /// Completes a running job and releases its key, unless a retention window holds it.
    pub async fn complete(&self, id: i64) -> Result<bool> {
        self.finish(id, RUNNING, "completed", None).await
    }

    /// Dead-letters a running job with its last error and releases its key, unless a retention
    /// window holds it.
    pub async fn dead_letter(&self, id: i64, error: &str) -> Result<bool> {
        self.finish(id, RUNNING, "dead", Some(error)).await
    }

    async fn finish(
        &self,
        id: i64,
        from: &[&str],
        state: &str,
        error: Option<&str>,
    ) -> Result<bool> {
        let moved = self
            .pool
            .run(async |c| {
                sqlx::query(&self.sql.finish_job)
                    .bind(id)
                    .bind(from)
                    .bind(state)
                    .bind(error)
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

    /// Claims up to `limit` due jobs of `queues` under a lease of `lease`.
    pub async fn claim(
        &self,
        queues: &[String],
        limit: i64,
        lease: Duration,
    ) -> Result<Vec<ClaimedJob>> {
        let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
        let claimed = self
            .pool
            .run(async |c| {
                sqlx::query_as(&self.sql.claim)
                    .bind(queues)
                    .bind(limit)
                    .bind(lease_ms)
                    .fetch_all(c)
                    .await
            })
            .await??;
        Ok(claimed)
    }
}
