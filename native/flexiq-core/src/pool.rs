//! The client's connections to PostgreSQL.
//!
//! sqlx's own pool pings every connection as it goes back: a second round trip for every
//! statement, which costs a single enqueue about a third of its throughput. This pool hands a
//! connection back without a word, checks only connections that sat idle for a while, and
//! drops any connection whose statement failed in a way that leaves its state unknown.

use std::ops::{Deref, DerefMut};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::Connection;
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::error::{Error, Result};
use crate::tls;

/// A connection idle for longer than this is pinged before it is used again, so that one
/// dropped by a restart or a firewall while idle is replaced rather than failing a call.
const CHECK_IDLE_AFTER: Duration = Duration::from_secs(10);

pub(crate) struct Pool {
    options: PgConnectOptions,
    connect_timeout: Duration,
    /// One permit per connection that may be open.
    slots: Semaphore,
    /// Connections not in use, the most recently used last.
    idle: Mutex<Vec<Idle>>,
}

struct Idle {
    connection: PgConnection,
    since: Instant,
}

/// A connection taken from the pool. Given back by `finish`; dropped without that (a call
/// abandoned halfway), it is closed rather than reused.
struct PooledConnection<'a> {
    pool: &'a Pool,
    connection: Option<PgConnection>,
    _slot: SemaphorePermit<'a>,
}

impl Pool {
    pub fn new(options: PgConnectOptions, size: u32, connect_timeout: Duration) -> Pool {
        Pool {
            options,
            connect_timeout,
            slots: Semaphore::new(size as usize),
            idle: Mutex::new(Vec::new()),
        }
    }

    /// A connection: an idle one if there is one, a new one otherwise. Fails as unavailable
    /// when none comes free, or none can be opened, within the connect timeout.
    async fn acquire(&self) -> Result<PooledConnection<'_>> {
        let slot = tokio::time::timeout(self.connect_timeout, self.slots.acquire())
            .await
            .map_err(|_| {
                Error::Unavailable(format!(
                    "no connection came free within {:?}",
                    self.connect_timeout
                ))
            })?
            .map_err(|_| Error::Unavailable("the client is closed".into()))?;
        while let Some(mut idle) = self.take_idle() {
            if idle.since.elapsed() < CHECK_IDLE_AFTER || idle.connection.ping().await.is_ok() {
                return Ok(self.lend(idle.connection, slot));
            }
        }
        let connection = tokio::time::timeout(self.connect_timeout, tls::connect(&self.options))
            .await
            .map_err(|_| {
                Error::Unavailable(format!(
                    "could not connect within {:?}",
                    self.connect_timeout
                ))
            })??;
        Ok(self.lend(connection, slot))
    }

    /// Runs `work` on a connection and returns its outcome; the outer error is the pool's
    /// (no connection), the inner one the statement's.
    pub async fn run<T>(
        &self,
        work: impl AsyncFnOnce(&mut PgConnection) -> sqlx::Result<T>,
    ) -> Result<sqlx::Result<T>> {
        let mut connection = self.acquire().await?;
        let outcome = work(&mut connection).await;
        Ok(connection.finish(outcome))
    }

    fn take_idle(&self) -> Option<Idle> {
        self.idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .pop()
    }

    fn lend<'a>(
        &'a self,
        connection: PgConnection,
        slot: SemaphorePermit<'a>,
    ) -> PooledConnection<'a> {
        PooledConnection {
            pool: self,
            connection: Some(connection),
            _slot: slot,
        }
    }
}

impl PooledConnection<'_> {
    /// Returns the outcome of what ran on this connection, and the connection to the pool
    /// unless that outcome leaves it unusable: an I/O or protocol failure, or the server
    /// ending the session.
    fn finish<T>(mut self, outcome: sqlx::Result<T>) -> sqlx::Result<T> {
        let reusable = match &outcome {
            Ok(_) => true,
            Err(e) => session_survives(e),
        };
        if let (true, Some(connection)) = (reusable, self.connection.take()) {
            self.pool
                .idle
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .push(Idle {
                    connection,
                    since: Instant::now(),
                });
        }
        outcome
    }
}

/// Whether a connection is still in a known state after this error: a statement the server
/// refused leaves the session as it was, unless the refusal is the server ending it.
fn session_survives(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(d) => !d
            .code()
            .is_some_and(|c| c.starts_with("08") || c.starts_with("57P")),
        _ => false,
    }
}

impl Deref for PooledConnection<'_> {
    type Target = PgConnection;

    fn deref(&self) -> &PgConnection {
        self.connection
            .as_ref()
            .unwrap_or_else(|| unreachable!("a lent connection is held until finish"))
    }
}

impl DerefMut for PooledConnection<'_> {
    fn deref_mut(&mut self) -> &mut PgConnection {
        self.connection
            .as_mut()
            .unwrap_or_else(|| unreachable!("a lent connection is held until finish"))
    }
}
