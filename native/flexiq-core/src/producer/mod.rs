//! The producer: enqueue, single and bulk. An enqueue goes out as one of three statements
//! ([`Route`]): a plain insert (`insert_jobs.sql`), the `enqueue_keyed` function for entries
//! with keys (`resolve_keyed.sql`), or the `enqueue_flow` function for a debounced or
//! throttled job (`collapse_job.sql`). Single keyed calls sent together try the plain insert
//! first, which takes free keys, and go on to `resolve_keyed.sql` only for the keys that were
//! held (`calls`). The statement is prepared without the database ([`PreparedEnqueue::new`], in `prepared`), so
//! that a binding can also run it on a connection of its own, inside the application's
//! transaction, and hand the rows back to be resolved exactly as the core's own run resolves
//! them.
//!
//! On the client's own connections the statement commits alone (concurrent single enqueues may
//! share one: `lanes` schedules them, `calls` sends them), and the queues of its new jobs are
//! announced to idle workers afterwards (`announcer`), or within the statement for a single
//! enqueue that no other overlaps ([`Announce`]).

mod announcer;
pub(crate) mod batch;
mod calls;
mod lanes;
pub mod prepared;

use std::sync::Arc;

use sqlx::postgres::PgRow;
use sqlx::Row;

use crate::error::{sqlstate, Result};
use crate::pool::{Pool, Repeat};
use crate::request::JobRequest;
use crate::schema::Schema;
use crate::statement::{self, Binding, Param};

use announcer::Announcer;
use lanes::Lanes;
use prepared::repeat_for;
pub use prepared::{
    EnqueueRow, Enqueued, NonReplaceable, Outcome, PendingEnqueue, Plan, PreparedEnqueue, Route,
};

/// SQLSTATE of a deadlock, which concurrent batches with overlapping keys can still meet.
const DEADLOCK_SQLSTATE: &str = "40P01";
/// How often a batch that lost a deadlock is tried again.
const DEADLOCK_RETRIES: usize = 5;

/// The client's producer role: enqueues on the client's pool.
pub struct Producer {
    pool: Arc<Pool>,
    announcer: Arc<Announcer>,
    lanes: Lanes,
    sql: Statements,
}

/// The producer's statements, with the schema filled in once.
struct Statements {
    /// `insert_jobs.sql` as a plain insert, for entries without keys.
    insert: String,
    /// `insert_jobs.sql` inserting only the entries whose key is free: the first statement of
    /// keyed calls sent together (`calls`).
    insert_free_keys: String,
    resolve: String,
    collapse: String,
    /// A keyed call answered by a read while calls keep replaying (`calls`).
    replay_one: String,
    /// `insert`, `resolve` and `collapse` with JDBC's `?` placeholders, for a binding to run in
    /// the application's transaction.
    in_transaction: [String; 3],
}

impl Statements {
    fn for_schema(s: &Schema) -> Statements {
        let insert = |on_conflict: &str| {
            let template = include_str!("../../sql/insert_jobs.sql");
            s.statement(&template.replace("{on_conflict}", on_conflict))
        };
        let statements = Statements {
            insert: insert(""),
            insert_free_keys: insert(
                "ON CONFLICT (key_scope, key_digest) WHERE key_held DO NOTHING",
            ),
            resolve: s.statement(include_str!("../../sql/resolve_keyed.sql")),
            collapse: s.statement(include_str!("../../sql/collapse_job.sql")),
            replay_one: s.statement(include_str!("../../sql/replay_one.sql")),
            in_transaction: Default::default(),
        };
        Statements {
            in_transaction: [Route::Insert, Route::Resolve, Route::Collapse]
                .map(|route| statement::positional(statements.route(route))),
            ..statements
        }
    }

    /// The text of a route's statement.
    fn route(&self, route: Route) -> &str {
        match route {
            Route::Insert => &self.insert,
            Route::Resolve => &self.resolve,
            Route::Collapse => &self.collapse,
        }
    }
}

impl Producer {
    pub(crate) fn new(pool: Arc<Pool>, schema: &Schema, pool_size: u32) -> Producer {
        Producer {
            announcer: Arc::new(Announcer::new(
                Arc::clone(&pool),
                schema.statement(include_str!("../../sql/announce_queues.sql")),
            )),
            lanes: Lanes::new(pool_size),
            sql: Statements::for_schema(schema),
            pool,
        }
    }
}

impl Producer {
    /// Enqueues one job. Concurrent single enqueues may share a statement (see the `lanes`
    /// module); each returns once its own job has committed.
    pub async fn enqueue(&self, request: &JobRequest) -> Result<Enqueued> {
        self.enqueue_grouped(request).await
    }

    /// Enqueues a batch; the result has one entry per request, in input order. A conflict in any
    /// entry fails the whole batch, and nothing is written. A batch of one is [`Producer::enqueue`].
    pub async fn enqueue_many(&self, requests: &[JobRequest]) -> Result<Vec<Enqueued>> {
        match requests {
            [one] => Ok(vec![self.enqueue_grouped(one).await?]),
            _ => {
                self.enqueue_statement(requests, Announce::AfterCommit)
                    .await
            }
        }
    }

    /// Enqueues `requests` in one statement of their own, announcing their new jobs as
    /// `announce` says.
    pub(crate) async fn enqueue_statement(
        &self,
        requests: &[JobRequest],
        announce: Announce,
    ) -> Result<Vec<Enqueued>> {
        let prepared = PreparedEnqueue::new(requests)?;
        let rows = self
            .statement_rows(&prepared, announce == Announce::Within)
            .await?;
        if announce == Announce::AfterCommit && rows.iter().any(|r| r.created) {
            self.announcer.announce(prepared.due_queues());
        }
        prepared.resolve(&rows)
    }

    /// Enqueues `requests`, which all carry a key, through `resolve_keyed.sql`, announcing
    /// nothing: the caller announces what they made.
    pub(crate) async fn resolve(&self, requests: &[JobRequest]) -> Result<Vec<Enqueued>> {
        let prepared = PreparedEnqueue::new(requests)?;
        prepared.resolve(&self.statement_rows(&prepared, false).await?)
    }

    /// The rows of a prepared enqueue's statement; `within`: whether the statement announces its
    /// new jobs due now itself.
    async fn statement_rows(
        &self,
        prepared: &PreparedEnqueue<'_>,
        within: bool,
    ) -> Result<Vec<EnqueueRow>> {
        let Some(route) = prepared.route() else {
            return Ok(Vec::new());
        };
        Ok(self
            .enqueue_rows(
                self.sql.route(route),
                &prepared.params(within),
                repeat_for(prepared.requests()),
            )
            .await?
            .iter()
            .map(enqueue_row)
            .collect::<sqlx::Result<Vec<_>>>()?)
    }

    /// The rows of an enqueue statement run on a pool connection. A statement that lost a
    /// deadlock to a racing one (which overlapping keys can still meet) goes again.
    pub(crate) async fn enqueue_rows(
        &self,
        sql: &str,
        params: &[Param<'_>],
        repeat: Repeat,
    ) -> Result<Vec<PgRow>> {
        let mut attempt = 0;
        loop {
            let rows = self
                .pool
                .run(repeat, async |c| {
                    statement::bind(self.pool.query(sql), params, Binding::Arrays)
                        .fetch_all(c)
                        .await
                })
                .await?;
            match rows {
                Ok(rows) => return Ok(rows),
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

    /// The text of a prepared enqueue's statement for a binding to run in the application's
    /// transaction, with JDBC's `?` placeholders, and its parameters: the statement announces
    /// its new jobs itself, and PostgreSQL delivers the announcement when the application
    /// commits. `None` when there is nothing to send.
    pub fn in_transaction<'p>(
        &self,
        prepared: &'p PreparedEnqueue<'_>,
    ) -> Option<(&str, Vec<Param<'p>>)> {
        let route = prepared.route()?;
        let [insert, resolve, collapse] = &self.sql.in_transaction;
        let sql = match route {
            Route::Insert => insert,
            Route::Resolve => resolve,
            Route::Collapse => collapse,
        };
        Some((sql, prepared.params(true)))
    }
}

/// The first four columns of a row of an enqueue statement, which every one returns.
fn enqueue_row(row: &PgRow) -> sqlx::Result<EnqueueRow> {
    Ok(EnqueueRow {
        job_id: row.try_get(0)?,
        created: row.try_get(1)?,
        conflict: row.try_get(2)?,
        decision: row.try_get(3)?,
    })
}

/// When the new jobs of an enqueue on FlexiQ's own connections are announced to idle workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Announce {
    /// By the announcer, in a transaction of its own after the enqueue commits, so that
    /// concurrent enqueues never wait for each other's commits (see the `announcer` module).
    AfterCommit,
    /// Within the enqueue's own statement, delivered at its commit: for an enqueue that no
    /// other overlaps, whose wake-up then saves the announcer's round trip.
    Within,
}
