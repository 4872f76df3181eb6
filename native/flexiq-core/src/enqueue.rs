//! Enqueue, single and bulk. Every call is one statement and one round trip: a plain bulk
//! insert when no entry carries a key, the `enqueue_keyed` function otherwise.

use serde::Deserialize;
use serde_json::Value;

use sqlx::postgres::PgRow;
use sqlx::Row;

use crate::batch::{Columns, KeyedBatch};
use crate::client::Client;
use crate::error::{Conflict, Error, Result};
use crate::keys;
use crate::pool::Repeat;
use crate::request::{differing_fields, JobRequest};

/// What PostgreSQL did with one enqueue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A new job was created.
    Accepted,
    /// The key was already bound to an equivalent request; nothing was written.
    Replayed,
}

/// The job an enqueue resolved to, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Enqueued {
    pub job_id: i64,
    pub outcome: Outcome,
}

/// SQLSTATE raised by `enqueue_keyed` for an idempotency conflict.
const CONFLICT_SQLSTATE: &str = "FQ409";
/// SQLSTATE of a deadlock, which concurrent batches with overlapping keys can still meet.
const DEADLOCK_SQLSTATE: &str = "40P01";
/// How often a batch that lost a deadlock is tried again.
const DEADLOCK_RETRIES: usize = 5;

/// The DETAIL of a conflict raised by `enqueue_keyed`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConflictDetail {
    /// The position of the entry among those sent.
    index: usize,
    job_id: i64,
    accepted: Value,
}

impl Client {
    /// Enqueues one job.
    pub async fn enqueue(&self, request: &JobRequest) -> Result<Enqueued> {
        let mut one = self.enqueue_many(std::slice::from_ref(request)).await?;
        one.pop()
            .ok_or_else(|| Error::Storage("enqueue returned no row".into()))
    }

    /// Enqueues a batch; the result has one entry per request, in input order. A conflict in any
    /// entry fails the whole batch, and nothing is written.
    pub async fn enqueue_many(&self, requests: &[JobRequest]) -> Result<Vec<Enqueued>> {
        for (i, r) in requests.iter().enumerate() {
            r.validate().map_err(|e| match e {
                Error::InvalidArgument(m) if requests.len() > 1 => {
                    Error::InvalidArgument(format!("batch entry {i}: {m}"))
                }
                other => other,
            })?;
        }
        if requests.is_empty() {
            return Ok(Vec::new());
        }
        if requests.iter().all(|r| r.key.is_none()) {
            return self.insert_unkeyed(requests).await;
        }
        let batch = KeyedBatch::group(requests).map_err(Error::Conflict)?;
        // When every entry has a key, a repeat replays: same ids, nothing written twice. An
        // unkeyed entry would be inserted again.
        let repeat = if requests.iter().all(|r| r.key.is_some()) {
            Repeat::Safe
        } else {
            Repeat::Never
        };
        let mut attempt = 0;
        loop {
            let rows = self
                .pool
                .run(repeat, async |c| {
                    batch
                        .columns
                        .bind(sqlx::query(&self.sql.enqueue_keyed))
                        .bind(&batch.scopes)
                        .bind(&batch.digests)
                        .bind(&batch.previews)
                        .bind(&batch.id_ranks)
                        .fetch_all(c)
                        .await
                })
                .await?;
            match rows {
                Ok(rows) => return resolved(&rows, &batch),
                Err(e) => match sqlstate(&e).as_deref() {
                    Some(CONFLICT_SQLSTATE) => return Err(conflict(&e, requests, &batch)),
                    Some(DEADLOCK_SQLSTATE) if attempt < DEADLOCK_RETRIES => attempt += 1,
                    _ => return Err(e.into()),
                },
            }
        }
    }

    async fn insert_unkeyed(&self, requests: &[JobRequest]) -> Result<Vec<Enqueued>> {
        let columns = Columns::of(requests.iter());
        let rows = self
            .pool
            // A repeat would insert every job again.
            .run(Repeat::Never, async |c| {
                columns
                    .bind(sqlx::query(&self.sql.insert_unkeyed))
                    .fetch_all(c)
                    .await
            })
            .await??;
        let mut ids = rows
            .iter()
            .map(|row| row.try_get::<i64, _>(0))
            .collect::<sqlx::Result<Vec<i64>>>()?;
        // Ids are drawn in input order, so ascending ids are input order whatever order
        // RETURNING used.
        ids.sort_unstable();
        Ok(ids
            .into_iter()
            .map(|job_id| Enqueued {
                job_id,
                outcome: Outcome::Accepted,
            })
            .collect())
    }
}

/// Each input entry's job: the one its key resolved to, which it created only when it is the
/// entry that carried the key and the function created the job.
fn resolved(rows: &[PgRow], batch: &KeyedBatch) -> Result<Vec<Enqueued>> {
    if rows.len() != batch.sent.len() {
        return Err(Error::Storage(format!(
            "enqueue returned {} rows for {} entries",
            rows.len(),
            batch.sent.len()
        )));
    }
    let sent = rows
        .iter()
        .map(|row| Ok((row.try_get::<i64, _>(0)?, row.try_get::<bool, _>(1)?)))
        .collect::<sqlx::Result<Vec<(i64, bool)>>>()?;
    Ok(batch
        .resolves_to
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let (job_id, created) = sent[p];
            let outcome = if created && batch.sent[p] == i {
                Outcome::Accepted
            } else {
                Outcome::Replayed
            };
            Enqueued { job_id, outcome }
        })
        .collect())
}

pub(crate) fn sqlstate(e: &sqlx::Error) -> Option<String> {
    e.as_database_error()
        .and_then(|d| d.code())
        .map(|c| c.into_owned())
}

fn conflict(e: &sqlx::Error, requests: &[JobRequest], batch: &KeyedBatch) -> Error {
    let detail = e
        .as_database_error()
        .and_then(|d| d.try_downcast_ref::<sqlx::postgres::PgDatabaseError>())
        .and_then(|d| d.detail())
        .and_then(|d| serde_json::from_str::<ConflictDetail>(d).ok());
    let Some((detail, index)) =
        detail.and_then(|d| batch.sent.get(d.index).map(|&index| (d, index)))
    else {
        return Error::Storage(format!(
            "idempotency conflict without a readable detail: {e}"
        ));
    };
    let key = requests[index].key.as_deref().unwrap_or_default();
    Error::Conflict(Box::new(Conflict {
        index,
        job_id: Some(detail.job_id),
        batch_index: None,
        key_preview: keys::preview(key),
        key_digest: keys::hex(&keys::digest(key)),
        fields: differing_fields(&detail.accepted, &requests[index].fingerprint().to_value()),
    }))
}
