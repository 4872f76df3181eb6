//! Maintenance: what keeps a schema in shape when no call asks for it. Each pass releases the
//! keys whose retention has passed, rescues the expired leases of every queue, and deletes the
//! finished jobs whose retention has passed, in bounded batches.
//!
//! One client per schema runs the passes: the one whose dedicated session holds the schema's
//! advisory lock (sql/elect_maintainer.sql). The others try again at each of their ticks, and
//! one of them wins within a tick of the holder's session closing, which is what a dying
//! process does to it. Passes are safe to run concurrently anyway (every statement locks what
//! it changes, skipping or waiting on what others hold), so an operator may run one on demand
//! through the pool while the elected client runs its own.

use std::sync::Arc;

use sqlx::postgres::PgConnection;
use sqlx::{Connection, FromRow};
use tokio::sync::Mutex;

use crate::error::{Error, Result};
use crate::pool::{Pool, Repeat};
use crate::schema::Schema;
use crate::worker_store::RescuedJob;

/// How long finished jobs are kept, by final state, and how many rows one statement deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub completed_ms: i64,
    pub cancelled_ms: i64,
    pub dead_ms: i64,
    /// The most jobs of each final state one delete statement removes.
    pub batch_size: i64,
}

/// The most delete statements one pass runs, so that a pass over a large backlog of finished
/// jobs ends and the next starts from a fresh look; the caller runs the next pass at once when
/// this one stopped at the cap ([`MaintenanceReport::more_to_prune`]).
pub const MAX_BATCHES_PER_PASS: u32 = 100;

impl Retention {
    fn check(&self) -> Result<()> {
        let retentions = [
            ("completedRetention", self.completed_ms),
            ("cancelledRetention", self.cancelled_ms),
            ("deadRetention", self.dead_ms),
        ];
        for (name, ms) in retentions {
            if ms < 0 {
                return Err(Error::InvalidArgument(format!(
                    "maintenance {name} is {ms} ms; it must not be negative"
                )));
            }
        }
        if !(1..=100_000).contains(&self.batch_size) {
            return Err(Error::InvalidArgument(format!(
                "maintenance batchSize is {}; it must be between 1 and 100000",
                self.batch_size
            )));
        }
        Ok(())
    }
}

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MaintenanceReport {
    /// Keys of finished jobs released because their retention had passed.
    pub keys_released: u64,
    /// Jobs moved because their lease or deadline had passed (see
    /// [`WorkerStore::rescue_expired`](crate::worker_store::WorkerStore::rescue_expired)).
    pub rescued: Vec<RescuedJob>,
    pub completed_deleted: u64,
    pub cancelled_deleted: u64,
    pub dead_deleted: u64,
    /// Registrations of workers that stopped heartbeating, removed.
    pub workers_removed: u64,
    /// Whether the pass stopped at [`MAX_BATCHES_PER_PASS`] with jobs left to delete.
    pub more_to_prune: bool,
}

/// What a tick of [`Maintenance::maintain`] came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Maintained {
    /// This client runs the schema's maintenance, and ran this pass.
    Ran(MaintenanceReport),
    /// Another client's session holds the lock.
    ElsewhereRun,
    /// This client's role may not delete jobs or release their keys (a worker's or a
    /// producer's grants): it never takes part. Its session is closed.
    NotPermitted,
}

/// The outcome of one try for the lock.
#[derive(Debug, FromRow)]
struct Ballot {
    may_maintain: bool,
    elected: bool,
}

/// How many jobs one delete statement removed, by state.
#[derive(Debug, FromRow)]
struct Pruned {
    completed: i64,
    cancelled: i64,
    dead: i64,
}

/// The client's maintenance role: its part in the election, and the passes.
pub struct Maintenance {
    pool: Arc<Pool>,
    /// This client's session in the election: open while the client takes part, holding the
    /// lock once it has won.
    session: Mutex<Option<Session>>,
    sql: Statements,
}

/// Maintenance's statements, with the schema filled in once.
struct Statements {
    elect_maintainer: String,
    resign_maintainer: String,
    expire_keys: String,
    rescue_expired: String,
    prune_finished: String,
    remove_stale_workers: String,
}

struct Session {
    connection: PgConnection,
    elected: bool,
}

impl Maintenance {
    pub(crate) fn new(pool: Arc<Pool>, s: &Schema) -> Maintenance {
        Maintenance {
            pool,
            session: Mutex::default(),
            sql: Statements {
                elect_maintainer: s.statement(include_str!("../sql/elect_maintainer.sql")),
                resign_maintainer: s.statement(include_str!("../sql/resign_maintainer.sql")),
                expire_keys: s.statement(include_str!("../sql/expire_keys.sql")),
                rescue_expired: s.statement(include_str!("../sql/rescue_expired.sql")),
                prune_finished: s.statement(include_str!("../sql/prune_finished.sql")),
                remove_stale_workers: s.statement(include_str!("../sql/remove_stale_workers.sql")),
            },
        }
    }

    /// Runs a pass if this client runs the schema's maintenance, trying to win the election
    /// first when it does not.
    ///
    /// A failure closes this client's session, and with it the lock if it held it: the next
    /// call starts over, and meanwhile another client may win.
    pub async fn maintain(&self, retention: &Retention) -> Result<Maintained> {
        retention.check()?;
        let mut guard = self.session.lock().await;
        let outcome = self.elected_pass(&mut guard, retention).await;
        if !matches!(outcome, Ok(Maintained::Ran(_) | Maintained::ElsewhereRun)) {
            *guard = None;
        }
        outcome
    }

    async fn elected_pass(
        &self,
        session: &mut Option<Session>,
        retention: &Retention,
    ) -> Result<Maintained> {
        let session = match session {
            Some(s) => s,
            None => session.insert(Session {
                connection: self.pool.dedicated().await?,
                elected: false,
            }),
        };
        if !session.elected {
            let ballot: Ballot = sqlx::query_as(&self.sql.elect_maintainer)
                .fetch_one(&mut session.connection)
                .await?;
            if !ballot.may_maintain {
                return Ok(Maintained::NotPermitted);
            }
            session.elected = ballot.elected;
            if !session.elected {
                return Ok(Maintained::ElsewhereRun);
            }
        }
        let report = self.pass(&mut session.connection, retention).await?;
        Ok(Maintained::Ran(report))
    }

    /// Whether this client's session holds the schema's maintenance lock, as of its last pass.
    pub async fn runs_maintenance(&self) -> bool {
        let session = self.session.lock().await;
        session.as_ref().is_some_and(|s| s.elected)
    }

    /// Leaves the election: closes this client's session, which frees the lock if it held it,
    /// so that another client takes over at its next try.
    pub async fn resign_maintenance(&self) {
        let session = self.session.lock().await.take();
        if let Some(mut s) = session {
            if s.elected {
                // Failing, the close below frees the lock anyway, a moment later.
                let _ = sqlx::query(&self.sql.resign_maintainer)
                    .execute(&mut s.connection)
                    .await;
            }
            let _ = s.connection.close().await;
        }
    }

    /// Runs one pass now through the pool, elected or not: for operators and tests.
    pub async fn run_maintenance(&self, retention: &Retention) -> Result<MaintenanceReport> {
        retention.check()?;
        Ok(self
            .pool
            // Every statement of a pass may run again: it redoes only what is still left to do.
            .run(Repeat::Safe, async |c| self.pass(c, retention).await)
            .await??)
    }

    /// One pass on `c`: keys, then leases and the workers that held them, then finished jobs
    /// (whose keys the first step may just have freed).
    async fn pass(
        &self,
        c: &mut PgConnection,
        retention: &Retention,
    ) -> sqlx::Result<MaintenanceReport> {
        let keys_released = self
            .pool
            .query(&self.sql.expire_keys)
            .execute(&mut *c)
            .await?
            .rows_affected();
        let rescued = self
            .pool
            .query_as(&self.sql.rescue_expired)
            .fetch_all(&mut *c)
            .await?;
        let workers_removed = self
            .pool
            .query(&self.sql.remove_stale_workers)
            .execute(&mut *c)
            .await?
            .rows_affected();
        let mut report = MaintenanceReport {
            keys_released,
            rescued,
            workers_removed,
            ..MaintenanceReport::default()
        };
        for _ in 0..MAX_BATCHES_PER_PASS {
            let pruned: Pruned = self
                .pool
                .query_as(&self.sql.prune_finished)
                .bind(retention.completed_ms)
                .bind(retention.cancelled_ms)
                .bind(retention.dead_ms)
                .bind(retention.batch_size)
                .fetch_one(&mut *c)
                .await?;
            report.completed_deleted += pruned.completed as u64;
            report.cancelled_deleted += pruned.cancelled as u64;
            report.dead_deleted += pruned.dead as u64;
            let full = [pruned.completed, pruned.cancelled, pruned.dead]
                .iter()
                .any(|&n| n >= retention.batch_size);
            if !full {
                return Ok(report);
            }
        }
        report.more_to_prune = true;
        Ok(report)
    }
}
