//! Enqueue, single and bulk. Every call is one statement and one round trip: a plain bulk
//! insert when no entry carries a key, the `enqueue_keyed` function otherwise. The statement is
//! prepared without the database ([`PreparedEnqueue::new`]), so that a binding can also run
//! it on a connection of its own, inside the application's transaction, and hand the rows back
//! to be resolved here exactly as the core's own run resolves them.

use serde::Deserialize;
use serde_json::Value;

use sqlx::Row;

use crate::batch::{Columns, KeyedBatch};
use crate::client::Client;
use crate::error::{Conflict, Error, Result};
use crate::keys;
use crate::pool::Repeat;
use crate::request::{differing_fields, JobRequest};
use crate::statement::{self, Param};

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

/// One row of an enqueue statement: a job, whether the statement created it, and, when a key
/// is held for a different request, the conflict (JSON: the entry's index among those sent and
/// the request its holder was accepted with). A conflict comes back as the only row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnqueueRow {
    pub job_id: i64,
    pub created: bool,
    pub conflict: Option<String>,
}

/// SQLSTATE of a deadlock, which concurrent batches with overlapping keys can still meet.
const DEADLOCK_SQLSTATE: &str = "40P01";
/// How often a batch that lost a deadlock is tried again.
const DEADLOCK_RETRIES: usize = 5;

/// The conflict column of an enqueue row.
#[derive(Deserialize)]
struct ConflictDetail {
    /// The position of the entry among those sent.
    index: usize,
    accepted: Value,
}

/// An enqueue ready to run: checked, grouped by key, its statement chosen.
pub struct PreparedEnqueue<'a> {
    requests: &'a [JobRequest],
    shape: Shape<'a>,
}

enum Shape<'a> {
    Empty,
    Unkeyed(Columns<'a>),
    Keyed(KeyedBatch<'a>),
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
        let prepared = PreparedEnqueue::new(requests)?;
        let Some(sql) = self.statement(&prepared, false) else {
            return Ok(Vec::new());
        };
        let params = prepared.params();
        let mut attempt = 0;
        loop {
            let rows = self
                .pool
                .run(prepared.repeat(), async |c| {
                    statement::bind(sqlx::query(sql), &params)
                        .fetch_all(c)
                        .await
                })
                .await?;
            match rows {
                Ok(rows) => {
                    let rows = rows
                        .iter()
                        .map(|row| {
                            Ok(EnqueueRow {
                                job_id: row.try_get(0)?,
                                created: row.try_get(1)?,
                                conflict: row.try_get(2)?,
                            })
                        })
                        .collect::<sqlx::Result<Vec<_>>>()?;
                    return prepared.resolve(&rows);
                }
                Err(e) if sqlstate(&e).as_deref() == Some(DEADLOCK_SQLSTATE) => {
                    if attempt == DEADLOCK_RETRIES {
                        return Err(e.into());
                    }
                    attempt += 1;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The text of a prepared enqueue's statement, with `$n` placeholders or, when
    /// `positional`, with JDBC's `?`; `None` when there is nothing to send.
    pub fn statement(&self, prepared: &PreparedEnqueue<'_>, positional: bool) -> Option<&str> {
        let sql = &self.sql;
        match (&prepared.shape, positional) {
            (Shape::Empty, _) => None,
            (Shape::Unkeyed(_), false) => Some(&sql.insert_unkeyed),
            (Shape::Unkeyed(_), true) => Some(&sql.insert_unkeyed_positional),
            (Shape::Keyed(_), false) => Some(&sql.enqueue_keyed),
            (Shape::Keyed(_), true) => Some(&sql.enqueue_keyed_positional),
        }
    }
}

impl<'a> PreparedEnqueue<'a> {
    /// Checks and groups an enqueue without touching the database. Fails as
    /// [`Client::enqueue_many`] would before sending anything: an invalid request, or a key
    /// used twice in the batch for different requests.
    pub fn new(requests: &'a [JobRequest]) -> Result<PreparedEnqueue<'a>> {
        for (i, r) in requests.iter().enumerate() {
            r.validate().map_err(|e| match e {
                Error::InvalidArgument(m) if requests.len() > 1 => {
                    Error::InvalidArgument(format!("batch entry {i}: {m}"))
                }
                other => other,
            })?;
        }
        let shape = if requests.is_empty() {
            Shape::Empty
        } else if requests.iter().all(|r| r.key.is_none()) {
            Shape::Unkeyed(Columns::of(requests.iter()))
        } else {
            Shape::Keyed(KeyedBatch::group(requests).map_err(Error::Conflict)?)
        };
        Ok(PreparedEnqueue { requests, shape })
    }

    /// The statement's parameters, in order.
    pub fn params(&self) -> Vec<Param<'_>> {
        match &self.shape {
            Shape::Empty => Vec::new(),
            Shape::Unkeyed(columns) => columns.params(),
            Shape::Keyed(batch) => batch.params(),
        }
    }

    /// Whether the pool may send the statement again after losing its answer: when every entry
    /// has a key, a repeat replays (same ids, nothing written twice); an unkeyed entry would be
    /// inserted again.
    fn repeat(&self) -> Repeat {
        if self.requests.iter().all(|r| r.key.is_some()) {
            Repeat::Safe
        } else {
            Repeat::Never
        }
    }

    /// Each input entry's job, from the statement's rows; a conflict row fails with
    /// [`Error::Conflict`].
    pub fn resolve(&self, rows: &[EnqueueRow]) -> Result<Vec<Enqueued>> {
        if let [EnqueueRow {
            job_id,
            conflict: Some(detail),
            ..
        }] = rows
        {
            return Err(self.conflict(*job_id, detail));
        }
        let expected = match &self.shape {
            Shape::Empty => 0,
            Shape::Unkeyed(_) => self.requests.len(),
            Shape::Keyed(batch) => batch.sent.len(),
        };
        if rows.len() != expected || rows.iter().any(|r| r.conflict.is_some()) {
            return Err(Error::Storage(format!(
                "enqueue returned {} rows for {expected} entries; is the schema migrated to \
                 this version of FlexiQ?",
                rows.len()
            )));
        }
        match &self.shape {
            Shape::Empty => Ok(Vec::new()),
            Shape::Unkeyed(_) => {
                let mut ids: Vec<i64> = rows.iter().map(|r| r.job_id).collect();
                // Ids are drawn in input order, so ascending ids are input order whatever
                // order RETURNING used.
                ids.sort_unstable();
                Ok(ids
                    .into_iter()
                    .map(|job_id| Enqueued {
                        job_id,
                        outcome: Outcome::Accepted,
                    })
                    .collect())
            }
            Shape::Keyed(batch) => Ok(resolved(rows, batch)),
        }
    }

    fn conflict(&self, job_id: i64, detail: &str) -> Error {
        let batch = match &self.shape {
            Shape::Keyed(batch) => batch,
            _ => {
                return Error::Storage(format!("a conflict for an enqueue without keys: {detail}"))
            }
        };
        let Some((detail, index)) = serde_json::from_str::<ConflictDetail>(detail)
            .ok()
            .and_then(|d| batch.sent.get(d.index).map(|&index| (d, index)))
        else {
            return Error::Storage(format!("a conflict that cannot be read: {detail}"));
        };
        let request = &self.requests[index];
        let key = request.key.as_deref().unwrap_or_default();
        Error::Conflict(Box::new(Conflict {
            index,
            job_id: Some(job_id),
            batch_index: None,
            key_preview: keys::preview(key),
            key_digest: keys::hex(&keys::digest(key)),
            fields: differing_fields(&detail.accepted, &request.fingerprint().to_value()),
        }))
    }
}

/// Each input entry's job: the one its key resolved to, which it created only when it is the
/// entry that carried the key and the function created the job.
fn resolved(rows: &[EnqueueRow], batch: &KeyedBatch) -> Vec<Enqueued> {
    batch
        .resolves_to
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let row = &rows[p];
            let outcome = if row.created && batch.sent[p] == i {
                Outcome::Accepted
            } else {
                Outcome::Replayed
            };
            Enqueued {
                job_id: row.job_id,
                outcome,
            }
        })
        .collect()
}

pub(crate) fn sqlstate(e: &sqlx::Error) -> Option<String> {
    e.as_database_error()
        .and_then(|d| d.code())
        .map(|c| c.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyed(key: &str, payload: &str) -> JobRequest {
        JobRequest::new("t", payload.as_bytes().to_vec()).with_key(key)
    }

    fn row(job_id: i64, created: bool) -> EnqueueRow {
        EnqueueRow {
            job_id,
            created,
            conflict: None,
        }
    }

    #[test]
    fn rows_come_back_in_key_order_and_resolve_to_input_order() {
        let requests = [keyed("b", "{}"), keyed("a", "{}"), keyed("b", "{}")];
        let prepared = PreparedEnqueue::new(&requests).expect("valid");
        // One row per key, in the order the batch sent them; "a" met a holder.
        let Shape::Keyed(batch) = &prepared.shape else {
            panic!("a keyed batch")
        };
        let rows: Vec<EnqueueRow> = batch
            .sent
            .iter()
            .map(|&i| row(100 + i as i64, i != 1))
            .collect();
        let out = prepared.resolve(&rows).expect("resolved");
        let got: Vec<(i64, Outcome)> = out.iter().map(|e| (e.job_id, e.outcome)).collect();
        assert_eq!(
            got,
            [
                (100, Outcome::Accepted),
                (101, Outcome::Replayed),
                (100, Outcome::Replayed)
            ]
        );
    }

    #[test]
    fn a_conflict_row_names_the_input_entry_and_the_differing_fields() {
        let requests = [keyed("x", "{}"), keyed("a", "[1]")];
        let prepared = PreparedEnqueue::new(&requests).expect("valid");
        let Shape::Keyed(batch) = &prepared.shape else {
            panic!("a keyed batch")
        };
        let sent_index = batch.sent.iter().position(|&i| i == 1).expect("sent");
        let mut accepted = requests[1].fingerprint().to_value();
        accepted["priority"] = 7.into();
        let conflict = EnqueueRow {
            job_id: 42,
            created: false,
            conflict: Some(
                serde_json::json!({ "index": sent_index, "accepted": accepted }).to_string(),
            ),
        };
        match prepared.resolve(&[conflict]) {
            Err(Error::Conflict(c)) => {
                assert_eq!(
                    (c.index, c.job_id, c.fields.clone()),
                    (1, Some(42), vec!["priority".to_string()])
                );
                assert_eq!(c.key_digest, keys::hex(&keys::digest("a")));
            }
            other => panic!("expected a conflict, got {other:?}"),
        }
    }

    #[test]
    fn unkeyed_ids_are_put_in_input_order_and_a_short_answer_is_refused() {
        let requests = [
            JobRequest::new("t", b"1".to_vec()),
            JobRequest::new("t", b"2".to_vec()),
        ];
        let prepared = PreparedEnqueue::new(&requests).expect("valid");
        let out = prepared
            .resolve(&[row(8, true), row(7, true)])
            .expect("resolved");
        assert_eq!(out.iter().map(|e| e.job_id).collect::<Vec<_>>(), [7, 8]);
        let short = prepared.resolve(&[row(7, true)]);
        assert!(
            matches!(&short, Err(Error::Storage(m)) if m.contains("is the schema migrated")),
            "{short:?}"
        );
    }
}
