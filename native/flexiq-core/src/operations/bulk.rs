//! Bulk actions: cancel, purge or redrive every job a filter selects (a state, and optionally a
//! queue, a task and a range of creation times), in batches, newest first, each batch one
//! statement and one short transaction, so that no lock is held for long and enqueues and
//! workers go on meanwhile. Each batch checks every job's state again under its row lock, so a
//! job that moved on meanwhile is left; running the same action twice changes nothing the
//! first did not (a redrive replays each job's redrive key).

use super::queries::STATES;
use super::{job_statement, ListStatements, Operations};
use crate::error::{Error, Result};
use crate::pool::Repeat;
use crate::schema::Schema;
use crate::validate;

/// The jobs a bulk action selects: every filter but the state is optional.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFilter {
    /// A state as stored (`available`, …, `dead`), never `running`.
    pub state: String,
    pub queue: Option<String>,
    pub task: Option<String>,
    /// Jobs created at or after this, in microseconds since the Unix epoch.
    pub created_from_us: Option<i64>,
    /// Jobs created before this, in microseconds since the Unix epoch.
    pub created_before_us: Option<i64>,
}

/// What a bulk action does to each job it selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BulkAction {
    /// Cancels pending jobs (`available`, `scheduled`, `retryable`).
    Cancel,
    /// Deletes jobs, their keys with them.
    Purge,
    /// Puts dead jobs back to work; `key` makes the whole action idempotent.
    Redrive { key: String },
}

/// What a bulk action did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BulkOutcome {
    /// Jobs the filter selected, batch by batch.
    pub selected: u64,
    /// Jobs cancelled, deleted or redriven.
    pub changed: u64,
    /// Statements run.
    pub batches: u64,
}

/// Jobs per batch of a cancel or a purge: one statement's row locks and WAL.
pub const BULK_BATCH: i64 = 1000;
/// Jobs per batch of a redrive: each is a subtransaction, and PostgreSQL keeps up to 64 of a
/// transaction's in every snapshot before it must look them up on disk.
pub const REDRIVE_BATCH: i64 = 50;

/// The bulk statements, each for every combination of the queue and task filters.
pub(super) struct BulkStatements {
    count: ListStatements,
    cancel: ListStatements,
    purge: ListStatements,
    redrive: ListStatements,
}

impl BulkStatements {
    pub(super) fn for_schema(s: &Schema) -> BulkStatements {
        let with_batch = |template: &str| {
            ListStatements::by_filters(&with_bulk_batch(template), |t| job_statement(s, t))
        };
        BulkStatements {
            count: with_batch(include_str!("../../sql/bulk_count.sql")),
            cancel: with_batch(include_str!("../../sql/bulk_cancel.sql")),
            purge: with_batch(include_str!("../../sql/bulk_purge.sql")),
            redrive: with_batch(include_str!("../../sql/bulk_redrive.sql")),
        }
    }
}

/// A bulk statement's template with its batch (`bulk_batch.sql`, its time range included) in
/// place of `{bulk_batch}`; `{filters}` and `{schema}` are left to fill.
pub fn with_bulk_batch(template: &str) -> String {
    let batch = include_str!("../../sql/bulk_batch.sql").replace(
        "{created}",
        "AND ($6::bigint IS NULL OR j.created_at >= timestamptz 'epoch' + $6 * interval '1 microsecond') \
         AND ($7::bigint IS NULL OR j.created_at < timestamptz 'epoch' + $7 * interval '1 microsecond')",
    );
    template.replace("{bulk_batch}", &batch)
}

/// One batch's answer.
#[derive(sqlx::FromRow)]
struct Batch {
    last_id: Option<i64>,
    selected: i64,
    changed: i64,
}

impl JobFilter {
    fn check(&self) -> Result<()> {
        if self.state == "running" || !STATES.contains(&self.state.as_str()) {
            return Err(Error::InvalidArgument(format!(
                "a bulk action's state must be one of {:?} but running, got {:?}",
                STATES, self.state
            )));
        }
        if let Some(queue) = &self.queue {
            validate::name("queue", queue)?;
        }
        if let Some(task) = &self.task {
            validate::task_name(task)?;
        }
        if let (Some(from), Some(before)) = (self.created_from_us, self.created_before_us) {
            if from >= before {
                return Err(Error::InvalidArgument(format!(
                    "a bulk action's time range is empty: createdFrom ({from} µs) must be before \
                     createdBefore ({before} µs)"
                )));
            }
        }
        Ok(())
    }
}

impl BulkAction {
    /// Refuses a state the action does not apply to: a bulk action does exactly what it says to
    /// every job it selects, or is refused before it starts.
    fn check(&self, filter: &JobFilter) -> Result<()> {
        let fits = match self {
            BulkAction::Cancel => {
                ["available", "scheduled", "retryable"].contains(&filter.state.as_str())
            }
            BulkAction::Purge => true,
            BulkAction::Redrive { key } => {
                validate::key(key)?;
                filter.state == "dead"
            }
        };
        if fits {
            return Ok(());
        }
        let (what, states) = match self {
            BulkAction::Cancel => ("cancel", "available, scheduled or retryable"),
            _ => ("redrive", "dead"),
        };
        Err(Error::InvalidArgument(format!(
            "a bulk {what} applies to {states} jobs, not {} ones: filter on one of those states",
            filter.state
        )))
    }
}

impl Operations {
    /// How many jobs `filter` selects now: what a bulk action would take, shown before it runs.
    pub async fn count_matching(&self, filter: &JobFilter) -> Result<i64> {
        filter.check()?;
        let sql = self
            .sql
            .bulk
            .count
            .get(filter.queue.is_some(), filter.task.is_some());
        let (count,): (i64,) = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(sql)
                    .bind(i64::MAX)
                    .bind(&filter.state)
                    .bind(filter.queue.as_deref())
                    .bind(filter.task.as_deref())
                    .bind(None::<i64>)
                    .bind(filter.created_from_us)
                    .bind(filter.created_before_us)
                    .fetch_one(c)
                    .await
            })
            .await??;
        Ok(count)
    }

    /// Runs `action` on every job `filter` selects, batch by batch, newest first, until a batch
    /// comes back short. Jobs that enter the filter meanwhile with ids below the batches already
    /// run are not taken (they are newer, so their ids are above them).
    pub async fn bulk(&self, action: &BulkAction, filter: &JobFilter) -> Result<BulkOutcome> {
        filter.check()?;
        action.check(filter)?;
        let (by_queue, by_task) = (filter.queue.is_some(), filter.task.is_some());
        let (sql, limit, key) = match action {
            BulkAction::Cancel => (
                self.sql.bulk.cancel.get(by_queue, by_task),
                BULK_BATCH,
                None,
            ),
            BulkAction::Purge => (self.sql.bulk.purge.get(by_queue, by_task), BULK_BATCH, None),
            BulkAction::Redrive { key } => (
                self.sql.bulk.redrive.get(by_queue, by_task),
                REDRIVE_BATCH,
                Some(key),
            ),
        };
        let preview = key.map(|k| format!("bulk:{}", crate::keys::preview(k)));
        let mut outcome = BulkOutcome::default();
        let mut after = i64::MAX;
        loop {
            // A repeat after a lost answer finds the jobs as the first run left them.
            let batch: Batch = self
                .pool
                .run(Repeat::Safe, async |c| {
                    let mut q = self
                        .pool
                        .query_as(sql)
                        .bind(after)
                        .bind(&filter.state)
                        .bind(filter.queue.as_deref())
                        .bind(filter.task.as_deref())
                        .bind(limit)
                        .bind(filter.created_from_us)
                        .bind(filter.created_before_us);
                    if let Some(key) = key {
                        q = q.bind(key).bind(preview.as_deref());
                    }
                    q.fetch_one(c).await
                })
                .await??;
            outcome.batches += 1;
            outcome.selected += batch.selected as u64;
            outcome.changed += batch.changed as u64;
            match batch.last_id {
                Some(last) if batch.selected >= limit => after = last,
                _ => return Ok(outcome),
            }
        }
    }
}
