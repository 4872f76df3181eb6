//! The client: a connection pool to PostgreSQL, bound to one schema, with its SQL prepared.

use std::sync::Arc;
use std::time::Duration;

use crate::announcer::Announcer;
use crate::error::{Error, Result};
use crate::grouping::Grouping;
use crate::maintenance::Election;
use crate::pool::{Pool, Repeat};
use crate::positions::Positions;
use crate::schema::{self, Schema};
use crate::statement;
use crate::tls;
use crate::wakeups::Wakeups;

/// How to build a [`Client`].
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// A `postgres://` URL; its query string may set libpq's `sslmode`, `sslrootcert`, `sslcert`
    /// and `sslkey` (see the `tls` module).
    pub url: String,
    /// The PostgreSQL schema holding FlexiQ's tables.
    pub schema: String,
    /// The most connections the pool opens.
    pub pool_size: u32,
    /// How long opening a connection may take before the call fails as unavailable.
    pub connect_timeout: Duration,
    /// How long a call waits for one of the pool's connections to come free before it fails
    /// as [`Error::PoolExhausted`].
    pub acquire_timeout: Duration,
    /// Whether to apply missing migrations and changed definitions while connecting.
    pub migrate: bool,
}

impl ClientConfig {
    /// A configuration with the defaults: schema `flexiq`, 10 connections, 5 s to connect,
    /// 30 s to wait for a busy pool, no migration.
    pub fn new(url: impl Into<String>) -> ClientConfig {
        ClientConfig {
            url: url.into(),
            schema: "flexiq".into(),
            pool_size: 10,
            connect_timeout: Duration::from_secs(5),
            acquire_timeout: Duration::from_secs(30),
            migrate: false,
        }
    }
}

/// A FlexiQ client. Cheap to share: every method takes `&self`.
pub struct Client {
    pub(crate) pool: Arc<Pool>,
    pub(crate) announcer: Arc<Announcer>,
    pub(crate) grouping: Grouping,
    pub(crate) wakeups: Wakeups,
    /// Where workers' claims have got to in their queues.
    pub(crate) positions: Positions,
    pub(crate) election: Election,
    pub(crate) schema: Schema,
    pub(crate) sql: Statements,
}

/// Every statement the client runs, with its schema filled in once.
pub(crate) struct Statements {
    /// The enqueue statements as FlexiQ's own connections run them: new jobs are announced
    /// after the commit (`announce`).
    pub enqueue: EnqueueStatements,
    /// The same, announcing new jobs within the statement, for a single enqueue that no other
    /// overlaps (`grouping`): its wake-up goes out with its commit, one round trip sooner.
    pub enqueue_announcing: EnqueueStatements,
    /// The same for a binding to run in the application's transaction, with JDBC's `?`
    /// placeholders: new jobs are announced within the statement, delivered at the commit.
    pub enqueue_in_transaction: EnqueueStatements,
    /// The single enqueues of several callers, each entry standing alone (`grouping`): those
    /// whose key is free, then the others.
    pub insert_calls: String,
    pub enqueue_calls: String,
    /// A keyed call answered by a read while calls keep replaying (`grouping`).
    pub replay_one: String,
    pub get_job: String,
    pub find_by_key: String,
    /// `list_jobs.sql` for each combination of filters (see [`ListStatements`]).
    pub list_jobs: ListStatements,
    pub throughput: String,
    pub get_payload: String,
    pub finish_job: String,
    pub purge: String,
    pub expire_keys: String,
    pub elect_maintainer: String,
    pub resign_maintainer: String,
    pub prune_finished: String,
    pub set_rate_limit: String,
    pub remove_rate_limit: String,
    pub count_jobs: String,
    pub drop_schema: String,
    pub claim: String,
    pub recover_claim: String,
    pub complete_attempts: String,
    pub save_checkpoint: String,
    pub checkpoint: String,
    pub redrive: String,
    pub extend_leases: String,
    pub fail_attempt: String,
    pub rescue_expired: String,
    pub return_attempts: String,
    pub set_grantee: String,
    pub grant_producer: String,
    pub grant_worker: String,
}

/// The three enqueue statements: a batch without keys, a batch with keys, one keyed job.
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
            insert_unkeyed: text(include_str!("../sql/insert_unkeyed.sql")),
            enqueue_keyed: text(include_str!("../sql/enqueue_keyed.sql")),
            enqueue_one_keyed: text(include_str!("../sql/enqueue_one_keyed.sql")),
            enqueue_flow: text(include_str!("../sql/enqueue_flow.sql")),
        }
    }
}

/// A statement over running attempts given by the caller: `{held_attempts}` filled in.
fn held_attempts_statement(s: &Schema, template: &str) -> String {
    s.statement(&template.replace("{held_attempts}", include_str!("../sql/held_attempts.sql")))
}

/// A statement that reads jobs as operators see them: `{job_columns}` filled in.
fn job_statement(s: &Schema, template: &str) -> String {
    s.statement(&template.replace("{job_columns}", include_str!("../sql/job_columns.sql")))
}

/// `list_jobs.sql` by filter: none, by queue, by task, by both. Each is a text of its own, so
/// that each gets a plan of its own, with the index its filters call for.
pub(crate) struct ListStatements {
    texts: [String; 4],
}

impl ListStatements {
    fn for_schema(s: &Schema) -> ListStatements {
        let text = |filters: &str| {
            job_statement(
                s,
                &include_str!("../sql/list_jobs.sql").replace("{filters}", filters),
            )
        };
        ListStatements {
            texts: [
                text(""),
                text("AND j.queue = $3"),
                text("AND j.task = $4"),
                text("AND j.queue = $3 AND j.task = $4"),
            ],
        }
    }

    /// The statement for these filters.
    pub(crate) fn get(&self, by_queue: bool, by_task: bool) -> &str {
        &self.texts[usize::from(by_queue) + 2 * usize::from(by_task)]
    }
}

impl Statements {
    fn for_schema(s: &Schema) -> Statements {
        Statements {
            enqueue: EnqueueStatements::for_schema(s, false, false),
            enqueue_announcing: EnqueueStatements::for_schema(s, true, false),
            enqueue_in_transaction: EnqueueStatements::for_schema(s, true, true),
            enqueue_calls: s.statement(include_str!("../sql/enqueue_calls.sql")),
            insert_calls: s.statement(include_str!("../sql/insert_calls.sql")),
            replay_one: s.statement(include_str!("../sql/replay_one.sql")),
            get_job: job_statement(s, include_str!("../sql/get_job.sql")),
            find_by_key: job_statement(s, include_str!("../sql/find_by_key.sql")),
            list_jobs: ListStatements::for_schema(s),
            throughput: s.statement(include_str!("../sql/throughput.sql")),
            get_payload: s.statement(include_str!("../sql/get_payload.sql")),
            finish_job: s.statement(include_str!("../sql/finish_job.sql")),
            purge: s.statement(include_str!("../sql/purge.sql")),
            expire_keys: s.statement(include_str!("../sql/expire_keys.sql")),
            elect_maintainer: s.statement(include_str!("../sql/elect_maintainer.sql")),
            resign_maintainer: s.statement(include_str!("../sql/resign_maintainer.sql")),
            prune_finished: s.statement(include_str!("../sql/prune_finished.sql")),
            set_rate_limit: s.statement(include_str!("../sql/set_rate_limit.sql")),
            remove_rate_limit: s.statement(include_str!("../sql/remove_rate_limit.sql")),
            count_jobs: s.statement(include_str!("../sql/count_jobs.sql")),
            drop_schema: s.statement(include_str!("../sql/drop_schema.sql")),
            claim: s.statement(include_str!("../sql/claim.sql")),
            recover_claim: s.statement(include_str!("../sql/recover_claim.sql")),
            complete_attempts: held_attempts_statement(
                s,
                include_str!("../sql/complete_attempts.sql"),
            ),
            save_checkpoint: s.statement(include_str!("../sql/save_checkpoint.sql")),
            checkpoint: s.statement(include_str!("../sql/checkpoint.sql")),
            redrive: s.statement(include_str!("../sql/redrive.sql")),
            extend_leases: held_attempts_statement(s, include_str!("../sql/extend_leases.sql")),
            fail_attempt: s.statement(include_str!("../sql/fail_attempt.sql")),
            rescue_expired: s.statement(include_str!("../sql/rescue_expired.sql")),
            return_attempts: held_attempts_statement(s, include_str!("../sql/return_attempts.sql")),
            set_grantee: s.statement(include_str!("../sql/set_grantee.sql")),
            grant_producer: s.statement(include_str!("../sql/grant_producer.sql")),
            grant_worker: s.statement(include_str!("../sql/grant_worker.sql")),
        }
    }
}

impl Client {
    /// Connects (failing within the connect timeout when PostgreSQL is unreachable) and, when
    /// the configuration says so, migrates (see [`Client::migrate`]).
    pub async fn connect(config: &ClientConfig) -> Result<Client> {
        let schema = Schema::new(&config.schema)?;
        if config.pool_size == 0 {
            return Err(Error::InvalidArgument("poolSize must be at least 1".into()));
        }
        let options = tls::connect_options(&config.url)?;
        let pool = Arc::new(Pool::new(
            options.clone(),
            config.pool_size,
            config.connect_timeout,
            config.acquire_timeout,
            schema.name(),
        ));
        let client = Client {
            sql: Statements::for_schema(&schema),
            positions: Positions::default(),
            wakeups: Wakeups::new(options, schema.channel()),
            election: Election::default(),
            announcer: Arc::new(Announcer::new(
                Arc::clone(&pool),
                schema.statement(include_str!("../sql/announce.sql")),
            )),
            grouping: Grouping::new(config.pool_size),
            pool,
            schema,
        };
        // Fail here, not at the first call, when PostgreSQL cannot be reached.
        client.pool.run(Repeat::Safe, async |_| Ok(())).await??;
        if config.migrate {
            client.migrate().await?;
        }
        Ok(client)
    }

    /// Applies missing migrations, then the functions and triggers whose definitions changed;
    /// returns how many of either ran (0: the schema was up to date).
    pub async fn migrate(&self) -> Result<usize> {
        Ok(self
            .pool
            // One transaction under an advisory lock: a repeat finds nothing left to apply.
            .run(Repeat::Safe, async |c| {
                schema::migrate(c, &self.schema).await
            })
            .await??)
    }

    /// How many of this library's migrations and definitions the schema has not applied: 0
    /// when it is migrated. Reads only; a health check's question.
    pub async fn pending_migrations(&self) -> Result<usize> {
        Ok(self
            .pool
            .run(Repeat::Safe, async |c| {
                schema::pending(c, &self.schema).await
            })
            .await??)
    }

    /// Drops the schema with everything in it (jobs, checkpoints, functions, triggers).
    /// Irreversible; a repeat finds nothing left to drop.
    pub async fn drop_schema(&self) -> Result<()> {
        self.pool
            .run(Repeat::Safe, async |c| {
                sqlx::query(&self.sql.drop_schema).execute(c).await
            })
            .await??;
        Ok(())
    }

    /// The schema this client works in.
    pub fn schema(&self) -> &str {
        self.schema.name()
    }
}
