//! Enqueue, single and bulk. Every call is one statement and one round trip: a plain bulk
//! insert when no entry carries a key, the `enqueue_keyed` function otherwise.

use serde::Deserialize;
use serde_json::Value;

use crate::client::Client;
use crate::error::{Conflict, Error, Result};
use crate::keys;
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
/// SQLSTATE of a deadlock, which concurrent batches binding overlapping keys can still meet.
const DEADLOCK_SQLSTATE: &str = "40P01";
/// How often a batch that lost a deadlock is tried again.
const DEADLOCK_RETRIES: usize = 5;

/// The DETAIL of a conflict raised by `enqueue_keyed`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConflictDetail {
    index: usize,
    job_id: Option<i64>,
    batch_index: Option<usize>,
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
        let payloads: Vec<&[u8]> = requests.iter().map(|r| r.payload.as_slice()).collect();
        let texts: Vec<String> = requests.iter().map(|r| r.fingerprint().to_json()).collect();
        if requests.iter().all(|r| r.key.is_none()) {
            return self.insert_unkeyed(&payloads, &texts).await;
        }
        let scopes: Vec<&str> = requests.iter().map(|r| r.scope.as_str()).collect();
        let digests: Vec<Option<Vec<u8>>> = requests
            .iter()
            .map(|r| r.key.as_deref().map(keys::digest))
            .collect();
        let previews: Vec<Option<String>> = requests
            .iter()
            .map(|r| r.key.as_deref().map(keys::preview))
            .collect();
        let mut attempt = 0;
        loop {
            let rows = self
                .pool
                .run(async |c| {
                    sqlx::query_as::<_, (Option<i64>, bool)>(&self.sql.enqueue_keyed)
                        .bind(&payloads)
                        .bind(&texts)
                        .bind(&scopes)
                        .bind(&digests)
                        .bind(&previews)
                        .fetch_all(c)
                        .await
                })
                .await?;
            match rows {
                Ok(rows) => return resolved(rows, requests.len()),
                Err(e) => match sqlstate(&e).as_deref() {
                    Some(CONFLICT_SQLSTATE) => return Err(conflict(&e, requests)),
                    Some(DEADLOCK_SQLSTATE) if attempt < DEADLOCK_RETRIES => attempt += 1,
                    _ => return Err(e.into()),
                },
            }
        }
    }

    async fn insert_unkeyed(
        &self,
        payloads: &[&[u8]],
        requests: &[String],
    ) -> Result<Vec<Enqueued>> {
        let mut ids: Vec<i64> = self
            .pool
            .run(async |c| {
                sqlx::query_scalar(&self.sql.insert_unkeyed)
                    .bind(payloads)
                    .bind(requests)
                    .fetch_all(c)
                    .await
            })
            .await??;
        // Rows are inserted in input order, each taking the next sequence value, so ascending
        // ids are input order whatever order RETURNING used.
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

fn resolved(rows: Vec<(Option<i64>, bool)>, expected: usize) -> Result<Vec<Enqueued>> {
    if rows.len() != expected {
        return Err(Error::Storage(format!(
            "enqueue returned {} rows for {expected} entries",
            rows.len()
        )));
    }
    rows.into_iter()
        .enumerate()
        .map(|(i, (id, replayed))| {
            let job_id =
                id.ok_or_else(|| Error::Storage(format!("entry {i} resolved to no job")))?;
            let outcome = if replayed {
                Outcome::Replayed
            } else {
                Outcome::Accepted
            };
            Ok(Enqueued { job_id, outcome })
        })
        .collect()
}

fn sqlstate(e: &sqlx::Error) -> Option<String> {
    e.as_database_error()
        .and_then(|d| d.code())
        .map(|c| c.into_owned())
}

fn conflict(e: &sqlx::Error, requests: &[JobRequest]) -> Error {
    let detail = e
        .as_database_error()
        .and_then(|d| d.try_downcast_ref::<sqlx::postgres::PgDatabaseError>())
        .and_then(|d| d.detail())
        .and_then(|d| serde_json::from_str::<ConflictDetail>(d).ok());
    let Some(detail) = detail.filter(|d| d.index < requests.len()) else {
        return Error::Storage(format!(
            "idempotency conflict without a readable detail: {e}"
        ));
    };
    let key = requests[detail.index].key.as_deref().unwrap_or_default();
    Error::Conflict(Box::new(Conflict {
        index: detail.index,
        job_id: detail.job_id,
        batch_index: detail.batch_index,
        key_preview: keys::preview(key),
        key_digest: keys::hex(&keys::digest(key)),
        fields: differing_fields(
            &detail.accepted,
            &requests[detail.index].fingerprint().to_value(),
        ),
    }))
}
