//! What operators ask of the jobs: which job a key names, pages of jobs, how many finish per
//! minute, a job's payload. Each is one read-only statement served by an index; none reads
//! every job (the plan tests check).

use super::jobs::JobInfo;
use super::Operations;
use crate::error::{Error, Result};
use crate::pool::Repeat;
use crate::{keys, validate};

/// Every state a job can be in, as PostgreSQL stores them.
pub const STATES: &[&str] = &[
    "available",
    "scheduled",
    "retryable",
    "running",
    "completed",
    "cancelled",
    "dead",
];

/// The most jobs one page holds.
pub const MAX_PAGE: i32 = 500;

/// The longest window counts and throughput look back over: 7 days, in milliseconds.
pub const MAX_WINDOW_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// What a cursor starts with: a cursor is handed out by [`Operations::list_jobs`] and only read back.
const CURSOR_PREFIX: &str = "j1.";

/// Which jobs to list; every filter is optional.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JobQuery {
    pub queue: Option<String>,
    /// A state as stored (`available`, …, `dead`).
    pub state: Option<String>,
    pub task: Option<String>,
    /// How many jobs a page holds, 1 to [`MAX_PAGE`].
    pub limit: i32,
    /// The cursor of the previous page; `None` for the first.
    pub after: Option<String>,
}

/// One page of jobs, newest first, and the cursor of the next page when there is one.
#[derive(Debug, Clone, PartialEq)]
pub struct JobPage {
    pub jobs: Vec<JobInfo>,
    pub next_cursor: Option<String>,
}

/// Jobs of a queue that finished within one minute.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Throughput {
    pub queue: String,
    /// The minute's start, in microseconds since the Unix epoch.
    pub minute: i64,
    pub completed: i64,
    pub dead: i64,
}

/// A job's payload as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StoredPayload {
    pub task: String,
    pub payload: Vec<u8>,
    /// The codec that encoded `payload`; `None` when it is stored as serialized.
    pub payload_codec: Option<String>,
}

/// The cursor that resumes a listing after the job `id`.
fn cursor(id: i64) -> String {
    format!("{CURSOR_PREFIX}{id:x}")
}

/// The job id a cursor resumes after.
fn resume_after(cursor: &str) -> Result<i64> {
    cursor
        .strip_prefix(CURSOR_PREFIX)
        .and_then(|hex| i64::from_str_radix(hex, 16).ok())
        .filter(|id| *id > 0)
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "cursor {cursor:?} is not one that listJobs handed out; pass the nextCursor \
                 of the previous page, or none for the first page"
            ))
        })
}

/// Checks a window to look back over.
fn window(what: &str, ms: i64) -> Result<()> {
    if (1..=MAX_WINDOW_MS).contains(&ms) {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "{what} must be between 1 ms and 7 days, got {ms} ms"
    )))
}

impl Operations {
    /// The job holding `key` in `scope`, else the latest job that held it. The key is hashed
    /// here as every enqueue hashes it; only the scope and the digest are sent.
    pub async fn find_by_key(&self, scope: &str, key: &str) -> Result<Option<JobInfo>> {
        validate::name("scope", scope)?;
        validate::key(key)?;
        let digest = keys::digest(key);
        let job = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.find_by_key)
                    .bind(scope)
                    .bind(&digest)
                    .fetch_optional(c)
                    .await
            })
            .await??;
        Ok(job)
    }

    /// One page of the jobs `query` asks for, newest first (by id, which only grows): keyset
    /// paging, so each page costs the same however deep, and each job shows once while its
    /// state still matches.
    pub async fn list_jobs(&self, query: &JobQuery) -> Result<JobPage> {
        validate::count("limit", query.limit, 1, MAX_PAGE)?;
        if let Some(queue) = &query.queue {
            validate::name("queue", queue)?;
        }
        if let Some(task) = &query.task {
            validate::task_name(task)?;
        }
        let states: Vec<&str> = match &query.state {
            None => STATES.to_vec(),
            Some(state) => match STATES.iter().find(|s| **s == state.as_str()) {
                Some(s) => vec![*s],
                None => {
                    return Err(Error::InvalidArgument(format!(
                        "state {state:?} is not one of {STATES:?}"
                    )))
                }
            },
        };
        let after = match &query.after {
            None => i64::MAX,
            Some(c) => resume_after(c)?,
        };
        let sql = self
            .sql
            .list_jobs
            .get(query.queue.is_some(), query.task.is_some());
        // One more than the page, to learn whether another page follows.
        let fetch = i64::from(query.limit) + 1;
        let mut jobs: Vec<JobInfo> = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(sql)
                    .bind(after)
                    .bind(&states)
                    .bind(query.queue.as_deref())
                    .bind(query.task.as_deref())
                    .bind(fetch)
                    .fetch_all(c)
                    .await
            })
            .await??;
        let more = jobs.len() > query.limit as usize;
        jobs.truncate(query.limit as usize);
        let next_cursor = if more {
            jobs.last().map(|j| cursor(j.id))
        } else {
            None
        };
        Ok(JobPage { jobs, next_cursor })
    }

    /// Jobs completed and dead-lettered per queue and minute over the last `window_ms`
    /// milliseconds (at most 7 days), by queue then minute; minutes without any are left out.
    pub async fn throughput(&self, window_ms: i64) -> Result<Vec<Throughput>> {
        window("throughput window", window_ms)?;
        let rows = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.throughput)
                    .bind(window_ms)
                    .fetch_all(c)
                    .await
            })
            .await??;
        Ok(rows)
    }

    /// The payload of a job as stored, with the id of the codec that encoded it (`None`: the
    /// bytes its enqueue serialized).
    pub async fn get_payload(&self, id: i64) -> Result<Option<StoredPayload>> {
        let payload = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.get_payload)
                    .bind(id)
                    .fetch_optional(c)
                    .await
            })
            .await??;
        Ok(payload)
    }

    /// How many jobs each queue holds in each state; pairs with none are left out. Pending,
    /// running and dead jobs are all counted; completed and cancelled ones only if they
    /// finished within the last `finished_within_ms` milliseconds (at most 7 days), so that
    /// the count reads a recent window of them, not all of them.
    pub async fn count_jobs(&self, finished_within_ms: i64) -> Result<Vec<crate::JobCount>> {
        window("finishedWithin", finished_within_ms)?;
        let counts = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.count_jobs)
                    .bind(finished_within_ms)
                    .fetch_all(c)
                    .await
            })
            .await??;
        Ok(counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_as_its_id() {
        assert_eq!(resume_after(&cursor(1)).ok(), Some(1));
        assert_eq!(resume_after(&cursor(i64::MAX)).ok(), Some(i64::MAX));
    }

    #[test]
    fn a_cursor_not_handed_out_is_refused() {
        for bad in ["", "12", "j1.", "j1.zz", "j1.0", "j1.-5", "j2.10"] {
            assert!(resume_after(bad).is_err(), "{bad:?}");
        }
    }
}
