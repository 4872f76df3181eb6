//! The producer: enqueue, single and bulk. Every call is one statement: a plain bulk insert
//! when no entry carries a key, plain SQL for one keyed job, the `enqueue_keyed` function for a
//! batch with keys. The statement is prepared without the database ([`PreparedEnqueue::new`],
//! in `prepared`), so that a binding can also run it on a connection of its own, inside the
//! application's transaction, and hand the rows back to be resolved exactly as the core's own
//! run resolves them.
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
    EnqueueRow, Enqueued, NonReplaceable, Outcome, PendingEnqueue, Plan, PreparedEnqueue,
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
    /// The enqueue statements as FlexiQ's own connections run them: new jobs are announced
    /// after the commit (`announcer`).
    enqueue: EnqueueStatements,
    /// The same, announcing new jobs within the statement, for a single enqueue that no other
    /// overlaps (`lanes`): its wake-up goes out with its commit, one round trip sooner.
    enqueue_announcing: EnqueueStatements,
    /// The same for a binding to run in the application's transaction, with JDBC's `?`
    /// placeholders: new jobs are announced within the statement, delivered at the commit.
    enqueue_in_transaction: EnqueueStatements,
    /// The single enqueues of several callers, each entry standing alone (`calls`): those
    /// whose key is free, then the others.
    insert_calls: String,
    enqueue_calls: String,
    /// A keyed call answered by a read while calls keep replaying (`calls`).
    replay_one: String,
}

/// The enqueue statements: a batch without keys, a batch with keys, one keyed job, one
/// debounced or throttled job.
pub(crate) struct EnqueueStatements {
    pub insert_unkeyed: String,
    pub enqueue_keyed: String,
    pub enqueue_one_keyed: String,
    pub enqueue_flow: String,
}

impl EnqueueStatements {
    /// `announce`: whether new jobs are announced within the statement; `jdbc`: with JDBC's `?`
    /// placeholders.
    fn for_schema(s: &Schema, announce: bool, jdbc: bool) -> EnqueueStatements {
        let text = |template: &str| {
            let sql = s
                .statement(template)
                .replace("{announce}", if announce { "true" } else { "false" });
            if jdbc {
                statement::positional(&sql)
            } else {
                sql
            }
        };
        EnqueueStatements {
            insert_unkeyed: text(include_str!("../../sql/insert_unkeyed.sql")),
            enqueue_keyed: text(include_str!("../../sql/enqueue_keyed.sql")),
            enqueue_one_keyed: text(include_str!("../../sql/enqueue_one_keyed.sql")),
            enqueue_flow: text(include_str!("../../sql/enqueue_flow.sql")),
        }
    }
}

impl Producer {
    pub(crate) fn new(pool: Arc<Pool>, schema: &Schema, pool_size: u32) -> Producer {
        Producer {
            announcer: Arc::new(Announcer::new(
                Arc::clone(&pool),
                schema.statement(include_str!("../../sql/announce.sql")),
            )),
            lanes: Lanes::new(pool_size),
            sql: Statements {
                enqueue: EnqueueStatements::for_schema(schema, false, false),
                enqueue_announcing: EnqueueStatements::for_schema(schema, true, false),
                enqueue_in_transaction: EnqueueStatements::for_schema(schema, true, true),
                enqueue_calls: schema.statement(include_str!("../../sql/enqueue_calls.sql")),
                insert_calls: schema.statement(include_str!("../../sql/insert_calls.sql")),
                replay_one: schema.statement(include_str!("../../sql/replay_one.sql")),
            },
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
    /// entry fails the whole batch, and nothing is written. A batch of one is [`Client::enqueue`].
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
        let statements = match announce {
            Announce::AfterCommit => &self.sql.enqueue,
            Announce::Within => &self.sql.enqueue_announcing,
        };
        let Some(sql) = statements.choose(&prepared) else {
            return Ok(Vec::new());
        };
        let rows = self
            .enqueue_rows(sql, &prepared.params(), repeat_for(requests))
            .await?
            .iter()
            .map(|row| {
                Ok(EnqueueRow {
                    job_id: row.try_get(0)?,
                    created: row.try_get(1)?,
                    conflict: row.try_get(2)?,
                    decision: row.try_get(3)?,
                })
            })
            .collect::<sqlx::Result<Vec<_>>>()?;
        if announce == Announce::AfterCommit && rows.iter().any(|r| r.created) {
            self.announcer.announce(prepared.due_queues());
        }
        prepared.resolve(&rows)
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
                    statement::bind(sqlx::query(sql), params, Binding::Arrays)
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

    /// The text of a prepared enqueue's statement; `None` when there is nothing to send.
    /// `in_transaction`: for a binding to run in the application's transaction, with JDBC's `?`
    /// placeholders; the statement then announces its new jobs itself, and PostgreSQL
    /// delivers the announcement when the application commits.
    pub fn statement(&self, prepared: &PreparedEnqueue<'_>, in_transaction: bool) -> Option<&str> {
        if in_transaction {
            self.sql.enqueue_in_transaction.choose(prepared)
        } else {
            self.sql.enqueue.choose(prepared)
        }
    }
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
