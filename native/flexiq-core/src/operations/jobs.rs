//! Reading jobs and the state changes that move them out of the active states.

use serde::Serialize;

use super::Operations;
use crate::error::{sqlstate, Error, Result};
use crate::pool::Repeat;
use crate::{keys, validate};

/// SQLSTATE raised by `redrive` for a redrive key already used for another job.
const REDRIVE_KEY_REUSED: &str = "FQ410";

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
    /// Whether the job holds its key: it is active, or its retention window is open.
    pub key_held: bool,
    pub last_error: Option<String>,
    /// The payload codec that encoded the job's payload; `None` when it is stored as serialized.
    pub payload_codec: Option<String>,
}

impl Operations {
    /// The job with this id, if it exists.
    pub async fn get_job(&self, id: i64) -> Result<Option<JobInfo>> {
        let job = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.get_job)
                    .bind(id)
                    .fetch_optional(c)
                    .await
            })
            .await??;
        Ok(job)
    }

    /// Cancels a pending job and releases its key. False when the job is not pending.
    pub async fn cancel(&self, id: i64) -> Result<bool> {
        self.finish(id, PENDING, "cancelled").await
    }

    /// Completes a pending or running job without running it (work done out of band) and
    /// releases its key, unless a retention window holds it.
    pub async fn mark_completed(&self, id: i64) -> Result<bool> {
        self.finish(id, PENDING_OR_RUNNING, "completed").await
    }

    async fn finish(&self, id: i64, from: &[&str], state: &str) -> Result<bool> {
        let moved = self
            .pool
            // A repeat of a change that took effect would answer that the job was not there
            // to change.
            .run(Repeat::Never, async |c| {
                self.pool
                    .query(&self.sql.finish_job)
                    .bind(id)
                    .bind(from)
                    .bind(state)
                    .execute(c)
                    .await
            })
            .await??;
        Ok(moved.rows_affected() == 1)
    }

    /// Deletes a job that is not running; its key, kept on its row, goes with it whatever the
    /// retention.
    pub async fn purge(&self, id: i64) -> Result<bool> {
        let purged = self
            .pool
            // A repeat of a purge that took effect would answer that there was no job.
            .run(Repeat::Never, async |c| {
                self.pool.query(&self.sql.purge).bind(id).execute(c).await
            })
            .await??;
        Ok(purged.rows_affected() == 1)
    }

    /// Releases the keys of finished jobs whose retention has passed; returns how many. New
    /// enqueues take such keys over anyway; this keeps the index of held keys small.
    pub async fn expire_keys(&self) -> Result<u64> {
        let expired = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool.query(&self.sql.expire_keys).execute(c).await
            })
            .await??;
        Ok(expired.rows_affected())
    }
}

/// How many jobs of a queue are in a state.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct JobCount {
    pub queue: String,
    pub state: String,
    pub count: i64,
}

/// What a redrive did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redrive {
    /// The job is pending again, its attempts starting over, holding its key again.
    Redriven,
    /// This redrive key already redrove the job; nothing changed.
    Replayed,
    /// The job's key is held by another active job; nothing changed, for two active jobs never
    /// hold one key.
    KeyHeld { holder: i64 },
    /// The job is not dead-lettered; nothing changed.
    NotDead { state: String },
    /// There is no such job.
    NotFound,
}

impl Operations {
    /// Puts a dead-lettered job back to work under a redrive key of its own, so that a repeated
    /// request does not redrive twice. A redrive key already used for another job is refused.
    pub async fn redrive(&self, job_id: i64, redrive_key: &str) -> Result<Redrive> {
        validate::key(redrive_key)?;
        let digest = keys::digest(redrive_key);
        let preview = keys::preview(redrive_key);
        let row: sqlx::Result<(String, Option<i64>, Option<String>)> = self
            .pool
            // The redrive key makes a repeat a replay.
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.redrive)
                    .bind(job_id)
                    .bind(&digest)
                    .bind(&preview)
                    .fetch_one(c)
                    .await
            })
            .await?;
        let (outcome, holder, state) = match row {
            Err(e) if sqlstate(&e).as_deref() == Some(REDRIVE_KEY_REUSED) => {
                let message = e
                    .as_database_error()
                    .map(|d| d.message().to_owned())
                    .unwrap_or_default();
                return Err(Error::InvalidArgument(message));
            }
            other => other?,
        };
        Ok(match (outcome.as_str(), holder) {
            ("redriven", _) => Redrive::Redriven,
            ("replayed", _) => Redrive::Replayed,
            ("key_held", Some(holder)) => Redrive::KeyHeld { holder },
            ("not_dead", _) => Redrive::NotDead {
                state: state.unwrap_or_default(),
            },
            ("not_found", _) => Redrive::NotFound,
            (other, _) => return Err(Error::Storage(format!("redrive answered {other}"))),
        })
    }
}
