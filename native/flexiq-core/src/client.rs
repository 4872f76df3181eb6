//! The client: a connection pool to PostgreSQL, bound to one schema, and the roles that share it
//! (producer, worker store, operations, maintenance, wake-ups). Each role holds its own
//! statements and depends on the pool and the schema alone, never on another role.

use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::maintenance::Maintenance;
use crate::operations::Operations;
use crate::pool::{self, Pool, Repeat, Sessions};
use crate::producer::Producer;
use crate::schema::{self, Schema};
use crate::tls;
use crate::wakeups::Wakeups;
use crate::worker_store::WorkerStore;

/// How to build a [`Client`].
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// A `postgres://` URL; its query string may set libpq's `sslmode`, `sslrootcert`, `sslcert`
    /// and `sslkey` (see the `tls` module).
    pub url: String,
    /// A URL that reaches PostgreSQL without a pooler that shares server sessions, for the
    /// sessions that must be the client's own: wake-ups (`LISTEN`) and the maintenance
    /// election. Needed when `url` goes through PgBouncer in transaction mode, which
    /// [`Client::connect`] finds out.
    pub direct_url: Option<String>,
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
            direct_url: None,
            schema: "flexiq".into(),
            pool_size: 10,
            connect_timeout: Duration::from_secs(5),
            acquire_timeout: Duration::from_secs(30),
            migrate: false,
        }
    }
}

/// A FlexiQ client: a connection pool to PostgreSQL, bound to one schema, and the roles that
/// use it. Cheap to share: every method takes `&self`.
pub struct Client {
    pool: Arc<Pool>,
    schema: Schema,
    drop_schema: String,
    producer: Producer,
    worker_store: WorkerStore,
    operations: Operations,
    maintenance: Maintenance,
    wakeups: Wakeups,
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
        let direct = match &config.direct_url {
            Some(url) => tls::connect_options(url)?,
            None => options.clone(),
        };
        // Before any connection of the pool sets anything in its session.
        let sessions = pool::sessions_behind(&options, config.connect_timeout).await?;
        if sessions == Sessions::Shared && config.direct_url.is_none() {
            return Err(Error::InvalidArgument(format!(
                "the connections to {} share server sessions with other clients: a connection \
                 pooler in transaction mode (such as PgBouncer's pool_mode = transaction) sits \
                 between FlexiQ and PostgreSQL. Wake-ups (LISTEN) and the maintenance election \
                 need a session of their own: set directUrl to a URL that reaches PostgreSQL \
                 without that pooler (directly, or through a session-mode pool)",
                tls::target(&options)
            )));
        }
        let pool = Arc::new(Pool::new(
            options,
            sessions,
            direct.clone(),
            config.pool_size,
            config.connect_timeout,
            config.acquire_timeout,
            schema.name(),
        ));
        let client = Client {
            producer: Producer::new(Arc::clone(&pool), &schema, config.pool_size),
            worker_store: WorkerStore::new(Arc::clone(&pool), &schema),
            operations: Operations::new(Arc::clone(&pool), &schema),
            maintenance: Maintenance::new(Arc::clone(&pool), &schema),
            wakeups: Wakeups::new(direct, schema.channel()),
            drop_schema: schema.statement(include_str!("../sql/drop_schema.sql")),
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
                self.pool.query(&self.drop_schema).execute(c).await
            })
            .await??;
        Ok(())
    }

    /// The schema this client works in.
    pub fn schema(&self) -> &str {
        self.schema.name()
    }

    /// Enqueues.
    pub fn producer(&self) -> &Producer {
        &self.producer
    }

    /// Claims and runs jobs: leases, attempts, checkpoints.
    pub fn worker_store(&self) -> &WorkerStore {
        &self.worker_store
    }

    /// Reads and changes jobs, rate limits and grants.
    pub fn operations(&self) -> &Operations {
        &self.operations
    }

    /// The schema's maintenance: the election and its passes.
    pub fn maintenance(&self) -> &Maintenance {
        &self.maintenance
    }

    /// Wakes idle workers when jobs are announced.
    pub fn wakeups(&self) -> &Wakeups {
        &self.wakeups
    }
}
