//! An enqueue prepared without the database: checked, grouped by key, its statement chosen,
//! and how the statement's rows resolve to each entry's job and outcome. The client's own run
//! and a binding's run on a connection of its own resolve rows alike.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use serde_json::Value;

use super::batch::{Columns, KeyedBatch};
use crate::error::{Conflict, Error, Result};
use crate::keys;
use crate::pool::Repeat;
use crate::request::{differing_fields, fields, JobRequest};
use crate::statement::Param;
use crate::validate;

/// What PostgreSQL did with one enqueue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A new job was created.
    Accepted,
    /// The key was already bound to an equivalent request; nothing was written.
    Replayed,
    /// Debounce: the pending job holding the key took this request and a later due time.
    Replaced,
    /// Debounce: the job holding the key could not take this request; nothing was written.
    NonReplaceable(NonReplaceable),
    /// Throttle: the key's job, inside its window, absorbed this request; nothing was written.
    Coalesced,
}

/// Why a debounce could not replace the job holding its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonReplaceable {
    /// The key is held by a job enqueued without debounce.
    IncompatibleMode,
    /// The job has started (or has run and waits for a retry).
    NotPending,
    /// maxWait has passed since the job was first accepted.
    WindowElapsed,
}

impl Outcome {
    /// The outcome named by the decision column of an enqueue row.
    fn decided(decision: &str) -> Option<Outcome> {
        Some(match decision {
            "replaced" => Outcome::Replaced,
            "coalesced" => Outcome::Coalesced,
            "incompatible_mode" => Outcome::NonReplaceable(NonReplaceable::IncompatibleMode),
            "not_pending" => Outcome::NonReplaceable(NonReplaceable::NotPending),
            "window_elapsed" => Outcome::NonReplaceable(NonReplaceable::WindowElapsed),
            _ => return None,
        })
    }
}

/// The job an enqueue resolved to, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Enqueued {
    pub job_id: i64,
    pub outcome: Outcome,
}

/// One row of an enqueue statement: a job, whether the statement created it, and, when a key
/// is held for a different request, the conflict (JSON: the entry's index among those sent and
/// the request its holder was accepted with). A conflict comes back as the only row. For a
/// debounced or throttled job whose key was held, the decision (`enqueue_flow`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnqueueRow {
    pub job_id: i64,
    pub created: bool,
    pub conflict: Option<String>,
    pub decision: Option<String>,
}

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
    plan: Plan,
}

/// How the rows of an enqueue's statement map back to its entries. A binding that runs the
/// statement itself keeps it, with the entries, in a [`PendingEnqueue`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan(PlanKind);

#[derive(Debug, Clone, PartialEq, Eq)]
enum PlanKind {
    Empty,
    /// One row per entry.
    Unkeyed,
    /// One row per entry sent (see `KeyedBatch`).
    Keyed {
        sent: Vec<usize>,
        resolves_to: Vec<usize>,
    },
}

/// An enqueue whose statement a binding runs on a connection of its own: the entries, and how
/// the rows will map back to them. Resolving needs neither the database nor the work of
/// preparing again.
pub struct PendingEnqueue {
    requests: Vec<JobRequest>,
    plan: Plan,
}

impl PendingEnqueue {
    /// Keeps `requests` with the plan their [`PreparedEnqueue`] made.
    pub fn new(requests: Vec<JobRequest>, plan: Plan) -> PendingEnqueue {
        PendingEnqueue { requests, plan }
    }

    /// The entries.
    pub fn requests(&self) -> &[JobRequest] {
        &self.requests
    }

    /// Each entry's job, from the statement's rows, as [`PreparedEnqueue::resolve`].
    pub fn resolve(&self, rows: &[EnqueueRow]) -> Result<Vec<Enqueued>> {
        resolve(&self.requests, &self.plan, rows)
    }
}

/// Which statement an enqueue goes out as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `insert_jobs.sql`, without keys: a plain insert.
    Insert,
    /// `resolve_keyed.sql`: entries with keys, whatever their keys' state.
    Resolve,
    /// `collapse_job.sql`: one debounced or throttled job.
    Collapse,
}

enum Shape<'a> {
    Empty,
    Unkeyed(Columns<'a>),
    Keyed(KeyedBatch<'a>),
}

impl<'a> PreparedEnqueue<'a> {
    /// Checks and groups an enqueue without touching the database. Fails as
    /// [`Producer::enqueue_many`](super::Producer::enqueue_many) would before sending anything: an invalid request, or a key
    /// used twice in the batch for different requests.
    pub fn new(requests: &'a [JobRequest]) -> Result<PreparedEnqueue<'a>> {
        for (i, r) in requests.iter().enumerate() {
            r.validate().map_err(|e| match e {
                Error::InvalidArgument(m) if requests.len() > 1 => {
                    Error::InvalidArgument(format!("batch entry {i}: {m}"))
                }
                other => other,
            })?;
            if r.flow.collapses() && requests.len() > 1 {
                return Err(Error::InvalidArgument(format!(
                    "batch entry {i}: debounce and throttle take one job per call; enqueue this \
                     entry on its own"
                )));
            }
        }
        validate::batch_payload_size(requests.iter().map(|r| r.stored_payload().len()).sum())?;
        let (shape, plan) = if requests.is_empty() {
            (Shape::Empty, PlanKind::Empty)
        } else if requests.iter().all(|r| r.key.is_none()) {
            (
                Shape::Unkeyed(Columns::of(requests.iter())),
                PlanKind::Unkeyed,
            )
        } else {
            let mut batch = KeyedBatch::group(requests).map_err(Error::Conflict)?;
            let plan = PlanKind::Keyed {
                sent: std::mem::take(&mut batch.sent),
                resolves_to: std::mem::take(&mut batch.resolves_to),
            };
            (Shape::Keyed(batch), plan)
        };
        Ok(PreparedEnqueue {
            requests,
            shape,
            plan: Plan(plan),
        })
    }

    /// The entries.
    pub fn requests(&self) -> &'a [JobRequest] {
        self.requests
    }

    /// How the rows will map back to the entries, for a [`PendingEnqueue`].
    pub fn into_plan(self) -> Plan {
        self.plan
    }

    /// The statement to send; `None` when there is nothing to send.
    pub fn route(&self) -> Option<Route> {
        match &self.shape {
            Shape::Empty => None,
            Shape::Unkeyed(_) => Some(Route::Insert),
            Shape::Keyed(_) if self.collapses() => Some(Route::Collapse),
            Shape::Keyed(_) => Some(Route::Resolve),
        }
    }

    /// The statement's parameters, in order; `announce`: whether the statement announces the
    /// queues of its new jobs due now itself.
    pub fn params(&self, announce: bool) -> Vec<Param<'_>> {
        let mut params = match &self.shape {
            Shape::Empty => return Vec::new(),
            Shape::Unkeyed(columns) => columns.params(),
            Shape::Keyed(batch) => batch.params(self.ranked()),
        };
        params.push(Param::Bool(vec![Some(announce)]));
        params
    }

    /// The names of the statement's parameters, in order.
    pub fn param_names(&self) -> Vec<&'static str> {
        if matches!(self.shape, Shape::Empty) {
            return Vec::new();
        }
        fields::params()
            .map(|p| p.name)
            .chain(self.ranked().then_some("id_rank"))
            .chain(["announce"])
            .collect()
    }

    /// Whether the statement takes each entry's rank: `resolve_keyed.sql` does.
    fn ranked(&self) -> bool {
        self.route() == Some(Route::Resolve)
    }

    /// Whether this is one debounced or throttled job, which `enqueue_flow` takes.
    fn collapses(&self) -> bool {
        matches!(self.requests, [one] if one.flow.collapses())
    }

    /// The queues of the entries that are due at once, to be announced to idle workers once
    /// the statement has committed and made a job (of a batch, any job: announcing a queue
    /// with nothing new only wakes a worker for nothing).
    pub(crate) fn due_queues(&self) -> impl Iterator<Item = &str> {
        let now = now_micros();
        self.requests
            .iter()
            .filter(move |r| r.schedule.is_due(now))
            .map(|r| r.queue.as_str())
    }

    /// Each input entry's job, from the statement's rows; a conflict row fails with
    /// [`Error::Conflict`].
    pub fn resolve(&self, rows: &[EnqueueRow]) -> Result<Vec<Enqueued>> {
        resolve(self.requests, &self.plan, rows)
    }
}

fn resolve(requests: &[JobRequest], plan: &Plan, rows: &[EnqueueRow]) -> Result<Vec<Enqueued>> {
    if let [EnqueueRow {
        job_id,
        conflict: Some(detail),
        ..
    }] = rows
    {
        return Err(conflict(requests, plan, *job_id, detail));
    }
    let expected = match &plan.0 {
        PlanKind::Empty => 0,
        PlanKind::Unkeyed => requests.len(),
        PlanKind::Keyed { sent, .. } => sent.len(),
    };
    if rows.len() != expected || rows.iter().any(|r| r.conflict.is_some()) {
        return Err(Error::Storage(format!(
            "enqueue returned {} rows for {expected} entries; is the schema migrated to this \
             version of FlexiQ?",
            rows.len()
        )));
    }
    Ok(match &plan.0 {
        PlanKind::Empty => Vec::new(),
        PlanKind::Unkeyed => {
            let mut ids: Vec<i64> = rows.iter().map(|r| r.job_id).collect();
            // Ids are drawn in input order, so ascending ids are input order whatever order
            // RETURNING used.
            ids.sort_unstable();
            ids.into_iter()
                .map(|job_id| Enqueued {
                    job_id,
                    outcome: Outcome::Accepted,
                })
                .collect()
        }
        PlanKind::Keyed { sent, resolves_to } => resolved(rows, sent, resolves_to)?,
    })
}

fn conflict(requests: &[JobRequest], plan: &Plan, job_id: i64, detail: &str) -> Error {
    let PlanKind::Keyed { sent, .. } = &plan.0 else {
        return Error::Storage(format!("a conflict for an enqueue without keys: {detail}"));
    };
    let Some((detail, index)) = serde_json::from_str::<ConflictDetail>(detail)
        .ok()
        .and_then(|d| sent.get(d.index).map(|&index| (d, index)))
    else {
        return Error::Storage(format!("a conflict that cannot be read: {detail}"));
    };
    let request = &requests[index];
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

/// Each input entry's job: the one its key resolved to, which it created only when it is the
/// entry that carried the key and the function created the job.
fn resolved(rows: &[EnqueueRow], sent: &[usize], resolves_to: &[usize]) -> Result<Vec<Enqueued>> {
    resolves_to
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let row = &rows[p];
            let outcome = match &row.decision {
                _ if row.created && sent[p] == i => Outcome::Accepted,
                None => Outcome::Replayed,
                Some(d) => Outcome::decided(d).ok_or_else(|| {
                    Error::Storage(format!(
                        "enqueue returned the unknown decision {d:?}; is the schema migrated \
                         to this version of FlexiQ?"
                    ))
                })?,
            };
            Ok(Enqueued {
                job_id: row.job_id,
                outcome,
            })
        })
        .collect()
}

/// The time now, in microseconds since the epoch, to tell which jobs are due.
pub(crate) fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// Whether the pool may send a statement enqueueing `requests` again after losing its answer:
/// when every entry has a key, a repeat replays (same ids, nothing written twice); an unkeyed
/// entry would be inserted again.
pub(crate) fn repeat_for(requests: &[JobRequest]) -> Repeat {
    if requests.iter().all(|r| r.key.is_some()) {
        Repeat::Safe
    } else {
        Repeat::Never
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyed(key: &str, payload: &str) -> JobRequest {
        JobRequest::new("t", payload.as_bytes().to_vec()).with_key(key)
    }

    #[test]
    fn a_batch_whose_payloads_one_statement_cannot_carry_is_refused_before_sending() {
        let third = validate::MAX_STATEMENT_PAYLOAD_BYTES / 3;
        let mut requests: Vec<JobRequest> = (0..3)
            .map(|_| JobRequest::new("t", vec![0; third]))
            .collect();
        PreparedEnqueue::new(&requests).expect("512 MiB in all fits");
        requests.push(JobRequest::new("t", vec![0; 8]));
        let err = PreparedEnqueue::new(&requests)
            .err()
            .expect("beyond 512 MiB");
        assert!(matches!(err, Error::InvalidPayload(_)), "{err}");
    }

    fn row(job_id: i64, created: bool) -> EnqueueRow {
        EnqueueRow {
            job_id,
            created,
            conflict: None,
            decision: None,
        }
    }

    #[test]
    fn rows_come_back_in_key_order_and_resolve_to_input_order() {
        let requests = [keyed("b", "{}"), keyed("a", "{}"), keyed("b", "{}")];
        let prepared = PreparedEnqueue::new(&requests).expect("valid");
        // One row per key, in the order the batch sent them; "a" met a holder.
        let PlanKind::Keyed { sent, .. } = &prepared.plan.0 else {
            panic!("a keyed batch")
        };
        let rows: Vec<EnqueueRow> = sent.iter().map(|&i| row(100 + i as i64, i != 1)).collect();
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
        let PlanKind::Keyed { sent, .. } = &prepared.plan.0 else {
            panic!("a keyed batch")
        };
        let sent_index = sent.iter().position(|&i| i == 1).expect("sent");
        let mut accepted = requests[1].fingerprint().to_value();
        accepted["priority"] = 7.into();
        let conflict = EnqueueRow {
            job_id: 42,
            created: false,
            conflict: Some(
                serde_json::json!({ "index": sent_index, "accepted": accepted }).to_string(),
            ),
            decision: None,
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

    /// Answers of the wrong shape are refused as storage errors naming what is wrong, never
    /// indexed blindly: too many rows, a conflict naming an entry that was not sent, a decision
    /// the core does not know, a conflict detail that is not JSON.
    #[test]
    fn a_malformed_answer_is_a_storage_error() {
        let requests = [keyed("a", "{}"), keyed("b", "{}")];
        let prepared = PreparedEnqueue::new(&requests).expect("valid");
        let storage = |answer: Result<Vec<Enqueued>>, what: &str| {
            assert!(
                matches!(&answer, Err(Error::Storage(m)) if m.contains(what)),
                "{answer:?}"
            );
        };
        storage(
            prepared.resolve(&[row(1, true), row(2, true), row(3, true)]),
            "3 rows for 2 entries",
        );
        let conflict = |detail: &str| EnqueueRow {
            job_id: 9,
            created: false,
            conflict: Some(detail.into()),
            decision: None,
        };
        storage(
            prepared.resolve(&[conflict(r#"{"index": 2, "accepted": {}}"#)]),
            "cannot be read",
        );
        storage(prepared.resolve(&[conflict("not json")]), "cannot be read");
        let mut decided = row(1, false);
        decided.decision = Some("moved".into());
        storage(
            prepared.resolve(&[decided, row(2, true)]),
            "unknown decision \"moved\"",
        );
    }
}
