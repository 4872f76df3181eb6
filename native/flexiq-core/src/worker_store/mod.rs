//! The client's worker store role. Running jobs: claiming them under a lease, keeping the lease while a handler runs, and
//! recording how each attempt ended. An attempt is named by its job id and attempt number, so
//! that a worker whose lease passed cannot touch the job's later attempts.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

pub mod positions;
pub mod registration;

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::pool::{Pool, Repeat};
use crate::schema::Schema;
use crate::statement;
use crate::validate;
use positions::{Position, Positions, Start};

/// Checkpoints are for small values: a stage's result, an external id.
pub const MAX_CHECKPOINT_BYTES: usize = 64 * 1024;

/// A job handed to a worker for one attempt.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ClaimedJob {
    pub id: i64,
    pub queue: String,
    pub task: String,
    /// As stored: encoded by the codec `payload_codec` names, if any.
    pub payload: Vec<u8>,
    pub payload_codec: Option<String>,
    /// This attempt's number, from 1.
    pub attempt: i32,
    pub max_attempts: i32,
    pub timeout_ms: Option<i64>,
    /// The trace context the job was enqueued in (a JSON object of carrier entries), if any.
    pub trace_context: Option<String>,
    /// Microseconds from the job's due time (its enqueue, schedule or retry) to its claim.
    pub waited_us: i64,
}

/// A claimed job and its place in the claim order, where the next claim may read on from.
#[derive(sqlx::FromRow)]
struct ClaimRow {
    #[sqlx(flatten)]
    job: ClaimedJob,
    priority: i32,
    run_at_us: i64,
}

impl ClaimRow {
    fn position(&self) -> Position {
        Position {
            priority: self.priority,
            run_at_us: self.run_at_us,
            id: self.job.id,
        }
    }
}

/// A running job whose lease passed, put back to work or dead-lettered by a rescue.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RescuedJob {
    pub id: i64,
    pub queue: String,
    pub task: String,
    /// The attempt whose lease passed.
    pub attempt: i32,
    pub max_attempts: i32,
    /// Whether that was its last attempt, so that the job is now dead.
    pub dead: bool,
    /// Whether the job was waiting, not running, and is dead because its deadline passed.
    pub late: bool,
    /// What the job's last error now says.
    pub error: String,
}

/// Where a job stands now: for an attempt whose outcome was refused, to say why.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct JobAttempt {
    pub id: i64,
    /// Its latest attempt's number (0 before the first).
    pub attempt: i32,
    pub state: String,
}

/// One attempt of a job: the job and the attempt number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Attempt {
    pub job_id: i64,
    pub attempt: i32,
}

/// Where a failed attempt left its job.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct FailedAttempt {
    /// `retryable` (with `run_at` its next due time) or `dead`.
    pub state: String,
    /// Microseconds since the Unix epoch.
    pub run_at: i64,
    /// Whether the failure was recorded after the attempt's lease passed and a rescue had
    /// moved the job (no later attempt had started).
    pub late: bool,
}

/// An attempt whose completion was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completed {
    pub attempt: Attempt,
    /// Whether it was recorded after the attempt's lease passed and a rescue had moved the job
    /// (no later attempt had started): the job is completed all the same.
    pub late: bool,
}

/// The client's worker store role: claims, leases, attempts' outcomes, checkpoints.
pub struct WorkerStore {
    pool: Arc<Pool>,
    /// This process (`host:pid`), which its claims record on the jobs they start.
    process: String,
    /// Where claims have got to in their queues.
    positions: Positions,
    sql: Statements,
    in_transaction: TransactionStatements,
}

/// The statements a handler runs on a connection of the application's, inside its own
/// transaction, so that they commit with the handler's writes or not at all; with JDBC's `?`
/// placeholders. They are the worker's own statements, so that either way of recording an
/// outcome decides alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionStatements {
    /// Completes one attempt's job (parameters: an array of one job id, an array of one attempt
    /// number); returns a row (id, late) when the attempt still held the job, none otherwise.
    pub complete: String,
    /// Stores a checkpoint (job id, attempt number, name, value) while the attempt holds the
    /// job; one row affected when it did.
    pub save_checkpoint: String,
}

/// The worker store's statements, with the schema filled in once.
struct Statements {
    claim: String,
    recover_claim: String,
    complete_attempts: String,
    extend_leases: String,
    fail_attempt: String,
    rescue_expired: String,
    return_attempts: String,
    attempts_now: String,
    save_checkpoint: String,
    checkpoint: String,
    register_worker: String,
    deregister_worker: String,
}

/// Which attempts a statement over the caller's attempts takes.
#[derive(Clone, Copy)]
enum Held {
    /// Only attempts that hold their job: extending leases, giving attempts back.
    Running,
    /// Those, and attempts a rescue took the job from while no later attempt started: recording
    /// outcomes, which may reach the server after the lease passed.
    RunningOrRescued,
}

/// A statement over attempts given by the caller: `{held_attempts}` filled in.
fn held_attempts_statement(s: &Schema, template: &str, held: Held) -> String {
    let rescued_too = match held {
        Held::Running => "false",
        Held::RunningOrRescued => "true",
    };
    // Its comment lines go first: put after the template's `WITH held AS (`, the first would
    // join that line.
    let held_attempts = s.statement(
        &include_str!("../../sql/held_attempts.sql").replace("{rescued_too}", rescued_too),
    );
    s.statement(&template.replace("{held_attempts}", &held_attempts))
}

impl Statements {
    fn for_schema(s: &Schema) -> Statements {
        Statements {
            claim: s.statement(include_str!("../../sql/claim.sql")),
            recover_claim: s.statement(include_str!("../../sql/recover_claim.sql")),
            complete_attempts: held_attempts_statement(
                s,
                include_str!("../../sql/complete_attempts.sql"),
                Held::RunningOrRescued,
            ),
            extend_leases: held_attempts_statement(
                s,
                include_str!("../../sql/extend_leases.sql"),
                Held::Running,
            ),
            fail_attempt: s.statement(include_str!("../../sql/fail_attempt.sql")),
            rescue_expired: s.statement(include_str!("../../sql/rescue_expired.sql")),
            return_attempts: held_attempts_statement(
                s,
                include_str!("../../sql/return_attempts.sql"),
                Held::Running,
            ),
            attempts_now: s.statement(include_str!("../../sql/attempts_now.sql")),
            save_checkpoint: s.statement(include_str!("../../sql/save_checkpoint.sql")),
            checkpoint: s.statement(include_str!("../../sql/checkpoint.sql")),
            register_worker: s.statement(include_str!("../../sql/register_worker.sql")),
            deregister_worker: s.statement(include_str!("../../sql/deregister_worker.sql")),
        }
    }
}

impl TransactionStatements {
    fn of(sql: &Statements) -> TransactionStatements {
        TransactionStatements {
            complete: statement::positional(&sql.complete_attempts),
            save_checkpoint: statement::positional(&sql.save_checkpoint),
        }
    }
}

impl WorkerStore {
    pub(crate) fn new(pool: Arc<Pool>, s: &Schema) -> WorkerStore {
        let sql = Statements::for_schema(s);
        WorkerStore {
            pool,
            process: crate::host::process_label(),
            positions: Positions::default(),
            in_transaction: TransactionStatements::of(&sql),
            sql,
        }
    }

    /// The statements a handler runs in its own transaction (see [`TransactionStatements`]).
    pub fn in_transaction(&self) -> &TransactionStatements {
        &self.in_transaction
    }

    /// Claims up to `limit` due jobs of `queues` whose task is one of `tasks`, each under a
    /// lease of `lease`, marked with `token` (see [`WorkerStore::recover_claim`]). Reads every queue
    /// from its front.
    pub async fn claim(
        &self,
        queues: &[String],
        tasks: &[String],
        limit: i64,
        lease: Duration,
        token: i64,
    ) -> Result<Vec<ClaimedJob>> {
        let from_front = vec![None; queues.len()];
        let rows = self
            .claim_after(queues, tasks, limit, lease, token, &from_front)
            .await?;
        Ok(rows.into_iter().map(|r| r.job).collect())
    }

    /// Claims as [`WorkerStore::claim`] does, for a worker that claims over and over: each queue is
    /// read on from where this client's last claims of the same queues and tasks got to; from
    /// its front at once when that finds nothing, and now and then while claims take jobs (see
    /// the `positions` module).
    pub async fn claim_next(
        &self,
        queues: &[String],
        tasks: &[String],
        limit: i64,
        lease: Duration,
        token: i64,
    ) -> Result<Vec<ClaimedJob>> {
        let start = self.positions.start(queues, tasks);
        let rows = self
            .claim_from(queues, tasks, limit, lease, token, &start)
            .await?;
        if !rows.is_empty() || start.is_from_front() {
            return Ok(rows);
        }
        self.claim_from(
            queues,
            tasks,
            limit,
            lease,
            token,
            &Start::front(queues.len()),
        )
        .await
    }

    /// The claim from `start`, noted in the positions.
    async fn claim_from(
        &self,
        queues: &[String],
        tasks: &[String],
        limit: i64,
        lease: Duration,
        token: i64,
        start: &Start,
    ) -> Result<Vec<ClaimedJob>> {
        let began = Instant::now();
        let rows = self
            .claim_after(queues, tasks, limit, lease, token, &start.after)
            .await
            .inspect_err(|_| self.positions.failed(queues, tasks))?;
        let took: Vec<(&str, Position)> = rows
            .iter()
            .map(|r| (r.job.queue.as_str(), r.position()))
            .collect();
        self.positions
            .claimed(queues, tasks, start, began.elapsed(), &took);
        Ok(rows.into_iter().map(|r| r.job).collect())
    }

    /// The claim, reading each queue on from its position in `after` (`None`: from its front).
    async fn claim_after(
        &self,
        queues: &[String],
        tasks: &[String],
        limit: i64,
        lease: Duration,
        token: i64,
        after: &[Option<Position>],
    ) -> Result<Vec<ClaimRow>> {
        let priorities: Vec<Option<i32>> = after.iter().map(|p| p.map(|p| p.priority)).collect();
        let run_ats: Vec<Option<i64>> = after.iter().map(|p| p.map(|p| p.run_at_us)).collect();
        let ids: Vec<Option<i64>> = after.iter().map(|p| p.map(|p| p.id)).collect();
        let claimed = self
            .pool
            // A repeat claims other jobs; those of a first run that took effect wait for their
            // lease to pass, as they would if this call failed.
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.claim)
                    .bind(queues)
                    .bind(tasks)
                    .bind(limit)
                    .bind(millis(lease))
                    .bind(token)
                    .bind(&priorities)
                    .bind(&run_ats)
                    .bind(&ids)
                    .bind(&self.process)
                    .fetch_all(c)
                    .await
            })
            .await??;
        Ok(claimed)
    }

    /// The jobs that the claim marked with `token` took and that still run that attempt, their
    /// leases renewed for `lease`. A worker whose claim failed without an answer (the
    /// connection broke, so the claim may have committed) asks for them once PostgreSQL answers
    /// again, and runs them, instead of leaving them to lose their leases unrun.
    pub async fn recover_claim(&self, token: i64, lease: Duration) -> Result<Vec<ClaimedJob>> {
        let recovered = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.recover_claim)
                    .bind(token)
                    .bind(millis(lease))
                    .fetch_all(c)
                    .await
            })
            .await??;
        Ok(recovered)
    }

    /// Extends the leases of these attempts to `lease` from now; returns the attempts that
    /// still hold their job (the others lost it when their lease passed).
    pub async fn extend_leases(
        &self,
        attempts: &[Attempt],
        lease: Duration,
    ) -> Result<Vec<Attempt>> {
        let (ids, numbers) = columns(attempts);
        let kept: Vec<i64> = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_scalar(&self.sql.extend_leases)
                    .bind(&ids)
                    .bind(&numbers)
                    .bind(millis(lease))
                    .fetch_all(c)
                    .await
            })
            .await??;
        Ok(held(attempts, &kept))
    }

    /// Completes the jobs of attempts that succeeded, in one statement; returns the attempts
    /// recorded: those that still held their job, and those whose lease passed while no later
    /// attempt started (late). The others lost their job to a later attempt.
    pub async fn complete(&self, attempts: &[Attempt]) -> Result<Vec<Completed>> {
        let (ids, numbers) = columns(attempts);
        let done: Vec<(i64, bool)> = self
            .pool
            // Completion is guarded by the attempt: a repeat changes nothing more.
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.complete_attempts)
                    .bind(&ids)
                    .bind(&numbers)
                    .fetch_all(c)
                    .await
            })
            .await??;
        let late: HashMap<i64, bool> = done.into_iter().collect();
        Ok(attempts
            .iter()
            .filter_map(|&attempt| {
                late.get(&attempt.job_id)
                    .map(|&late| Completed { attempt, late })
            })
            .collect())
    }

    /// Stores a checkpoint of a running job under `name`, while `attempt` holds the job; false
    /// when it no longer does. Later attempts of the job read it with [`WorkerStore::checkpoint`].
    pub async fn save_checkpoint(
        &self,
        attempt: Attempt,
        name: &str,
        value: &[u8],
    ) -> Result<bool> {
        validate::name("checkpoint name", name)?;
        if value.len() > MAX_CHECKPOINT_BYTES {
            return Err(Error::InvalidArgument(format!(
                "checkpoint {name} is {} bytes, more than the {MAX_CHECKPOINT_BYTES} allowed",
                value.len()
            )));
        }
        let saved = self
            .pool
            // A repeat stores the same value again.
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query(&self.sql.save_checkpoint)
                    .bind(attempt.job_id)
                    .bind(attempt.attempt)
                    .bind(name)
                    .bind(value)
                    .execute(c)
                    .await
            })
            .await??;
        Ok(saved.rows_affected() == 1)
    }

    /// The checkpoint a job stored under `name`, if any.
    pub async fn checkpoint(&self, job_id: i64, name: &str) -> Result<Option<Vec<u8>>> {
        let value = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_scalar(&self.sql.checkpoint)
                    .bind(job_id)
                    .bind(name)
                    .fetch_optional(c)
                    .await
            })
            .await??;
        Ok(value)
    }

    /// Records a failed attempt: the job waits for its retry, or is dead-lettered when its
    /// attempts are spent. Recorded late, too, when the attempt's lease passed while no later
    /// attempt started. `None` when a later attempt has started.
    pub async fn fail(&self, attempt: Attempt, error: &str) -> Result<Option<FailedAttempt>> {
        let error = storable_error(error);
        let failed = self
            .pool
            // Guarded by the attempt: a repeat of a recorded failure changes nothing.
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.fail_attempt)
                    .bind(attempt.job_id)
                    .bind(attempt.attempt)
                    .bind(error.as_ref())
                    .fetch_optional(c)
                    .await
            })
            .await??;
        Ok(failed)
    }

    /// Puts back to work the running jobs whose lease has passed: as a failed attempt, or to
    /// the dead letters when their attempts are spent. Returns the jobs moved.
    pub async fn rescue_expired(&self) -> Result<Vec<RescuedJob>> {
        let moved = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.rescue_expired)
                    .fetch_all(c)
                    .await
            })
            .await??;
        Ok(moved)
    }

    /// Where the jobs `ids` stand now (those that still exist): for a worker whose outcome was
    /// refused, to say why.
    pub async fn attempts_now(&self, ids: &[i64]) -> Result<Vec<JobAttempt>> {
        let now = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.attempts_now)
                    .bind(ids)
                    .fetch_all(c)
                    .await
            })
            .await??;
        Ok(now)
    }

    /// Gives back unfinished attempts (a worker shutting down): their jobs are due again at
    /// once and the attempts do not count. Returns the attempts given back (those that still
    /// held their job).
    pub async fn return_attempts(&self, attempts: &[Attempt]) -> Result<Vec<Attempt>> {
        let (ids, numbers) = columns(attempts);
        let returned: Vec<i64> = self
            .pool
            // Guarded by the attempts: a repeat gives nothing back twice.
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_scalar(&self.sql.return_attempts)
                    .bind(&ids)
                    .bind(&numbers)
                    .fetch_all(c)
                    .await
            })
            .await??;
        Ok(held(attempts, &returned))
    }
}

/// The most of an attempt's error kept, in bytes: enough for a message and the start of a
/// trace, not a whole log.
pub const MAX_ERROR_BYTES: usize = 8 * 1024;

/// `error` as PostgreSQL can hold it: a NUL (which a `text` column refuses) written as `\0`,
/// and cut at [`MAX_ERROR_BYTES`] on a character boundary, saying how much was cut.
fn storable_error(error: &str) -> Cow<'_, str> {
    if error.len() <= MAX_ERROR_BYTES && !error.contains('\0') {
        return Cow::Borrowed(error);
    }
    let escaped = error.replace('\0', "\\0");
    if escaped.len() <= MAX_ERROR_BYTES {
        return Cow::Owned(escaped);
    }
    let mut end = MAX_ERROR_BYTES;
    while !escaped.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!(
        "{}… ({} more bytes cut)",
        &escaped[..end],
        escaped.len() - end
    ))
}

/// The attempts whose job is among `ids`.
fn held(attempts: &[Attempt], ids: &[i64]) -> Vec<Attempt> {
    let ids: HashSet<i64> = ids.iter().copied().collect();
    attempts
        .iter()
        .filter(|a| ids.contains(&a.job_id))
        .copied()
        .collect()
}

fn columns(attempts: &[Attempt]) -> (Vec<i64>, Vec<i32>) {
    attempts.iter().map(|a| (a.job_id, a.attempt)).unzip()
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_for_a_handler_s_transaction_name_each_parameter_once_in_order() {
        let sql = Statements::for_schema(&Schema::new("s").expect("valid"));
        for (sent, for_jdbc) in [
            (
                &sql.complete_attempts,
                TransactionStatements::of(&sql).complete,
            ),
            (
                &sql.save_checkpoint,
                TransactionStatements::of(&sql).save_checkpoint,
            ),
        ] {
            statement::assert_fit_for_positional(sent);
            assert_eq!(for_jdbc, statement::positional(sent));
        }
    }

    #[test]
    fn errors_lose_their_nuls_and_their_excess_but_say_so() {
        assert_eq!(storable_error("plain"), "plain");
        assert_eq!(storable_error("a\0b"), "a\\0b");
        let long = "é".repeat(MAX_ERROR_BYTES);
        let stored = storable_error(&long);
        assert!(stored.len() <= MAX_ERROR_BYTES + 40, "{}", stored.len());
        assert!(
            stored.ends_with(&format!(
                "… ({} more bytes cut)",
                long.len() - MAX_ERROR_BYTES
            )),
            "{}",
            &stored[stored.len() - 40..]
        );
    }
}
