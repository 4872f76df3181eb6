//! The client's connections to PostgreSQL.
//!
//! sqlx's own pool pings every connection as it goes back: a second round trip for every
//! statement. This pool hands a connection back without a word and drops any connection whose
//! statement failed in a way that leaves its state unknown.
//!
//! A connection the server closed while it sat idle (a restart, a failover, an idle-session
//! timeout) is only found out by using it, however long it sat. What happens then depends on
//! the statement, which each call site declares with [`Repeat`]:
//! - a statement that may run twice goes out on an idle connection as it is; if the connection
//!   turns out to be lost, the statement runs once more on a checked or new connection;
//! - a statement that must not run twice gets a checked connection: one that sat idle longer
//!   than [`RECENT`] is pinged first (one round trip), so that it only goes out on a connection
//!   that was alive.
//!
//! A connection given back moments ago is not pinged: it is as likely to be lost on the way of
//! the statement itself, which no ping can cover, as in the moments it sat idle. A ping before
//! every unkeyed statement took a round trip from each batch that 4 callers share.
//!
//! Between FlexiQ and PostgreSQL there may be a connection pooler that shares server sessions
//! among its clients (PgBouncer in transaction mode): a statement's server session changes from
//! one transaction to the next. [`Sessions::Shared`] says so, and then each call runs in a
//! transaction of its own, so that its statements' parse, bind and execution stay on one server
//! session; statements go out unnamed, since a named one would be left on a server session
//! that other clients then use; and no session setting is changed, since it would reach them
//! too. `sessions_shared` finds out which it is, before any connection of the pool is opened.
//!
//! A connection opened for a caller thread (see the `caller` module) has a single-threaded
//! runtime of its own, which the thread that borrows it drives while a statement is on its way:
//! the thread waits on the socket itself, as a blocking driver's would. Such a connection can
//! only serve caller threads; a task of a runtime gets a connection of that runtime. Callers
//! prefer their own kind and may use either; a task that finds only callers' connections idle
//! opens its own, closing one of them first when the pool is full, so that it never holds more
//! than its size.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use sqlx::postgres::{PgArguments, PgConnectOptions, PgConnection, PgRow, Postgres};
use sqlx::query::{Query, QueryAs, QueryScalar};
use sqlx::{Connection, Executor, FromRow, Row};
use tokio::runtime::Runtime;
use tokio::sync::Semaphore;

use crate::caller;
use crate::error::{Error, Result};
use crate::tls;

/// Whether a call's statement may run a second time, which the pool does when the idle
/// connection it was sent on turns out to have been closed by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Repeat {
    /// Running it again is harmless whether or not the first run took effect: a read, a keyed
    /// enqueue (the repeat replays and returns the same ids), a change guarded by the attempt
    /// it names. The call then cannot fail for a connection that died while idle.
    Safe,
    /// A second run could do the work twice (an unkeyed insert) or answer differently from the
    /// first (a cancel that found the job pending). Sent only on a checked or new connection.
    Never,
}

/// How long a connection may sit idle and still go out unpinged with a statement that must not
/// run twice: far longer than calls leave a busy connection idle, far shorter than a server
/// takes to restart.
const RECENT: Duration = Duration::from_millis(100);

/// Whether the server sessions behind the pool's connections are its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sessions {
    /// Each connection has its own server session (directly, or through a pooler in session
    /// mode).
    Own,
    /// A pooler hands each transaction whichever server session is free.
    Shared,
}

pub(crate) struct Pool {
    options: PgConnectOptions,
    sessions: Sessions,
    /// Where sessions that must outlive a call go (see [`Pool::dedicated`]): PostgreSQL
    /// directly when a URL for that was given, else the pool's own.
    direct: PgConnectOptions,
    connect_timeout: Duration,
    acquire_timeout: Duration,
    size: u32,
    /// Named in the message of a call that found every connection busy.
    schema: String,
    /// One permit per connection that may be open.
    slots: Semaphore,
    /// Connections not in use, each with when it was given back, the most recently used last.
    idle: Mutex<Vec<(Conn, Instant)>>,
}

/// A connection lent to one call. Given back by `finish`; dropped without that (a call
/// abandoned halfway), it is closed rather than reused.
struct Lent<'a> {
    pool: &'a Pool,
    conn: Conn,
    /// Taken from the idle list without a ping: it may have died while idle.
    unchecked: bool,
}

/// One of the pool's connections, and the runtime that a caller thread drives it on when it was
/// opened for callers.
struct Conn {
    // Declared first, so dropped before the runtime its socket is registered with.
    connection: PgConnection,
    driver: Option<Driver>,
}

impl Conn {
    /// Runs `work` on the connection, driving its own runtime on this thread when it has one;
    /// in a transaction of its own where sessions are shared.
    async fn run<T>(
        &mut self,
        sessions: Sessions,
        work: impl AsyncFnOnce(&mut PgConnection) -> sqlx::Result<T>,
    ) -> sqlx::Result<T> {
        let connection = &mut self.connection;
        Driver::run(self.driver.as_ref(), async move {
            match sessions {
                Sessions::Own => work(connection).await,
                Sessions::Shared => {
                    let mut tx = connection.begin().await?;
                    let out = work(&mut *tx).await?;
                    tx.commit().await?;
                    Ok(out)
                }
            }
        })
        .await
    }
}

/// A single-threaded runtime that only its connection's socket and timers use.
struct Driver(Option<Runtime>);

impl Driver {
    fn new() -> Result<Driver> {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map(|runtime| Driver(Some(runtime)))
            .map_err(|e| {
                Error::Unavailable(format!(
                    "could not set up a new PostgreSQL connection's I/O ({e}); the process may \
                     be out of file descriptors: raise its limit or lower poolSize"
                ))
            })
    }

    /// Runs `future` on this thread: on `driver`'s runtime when there is one, otherwise within
    /// the runtime the thread is already in.
    async fn run<F: Future>(driver: Option<&Driver>, future: F) -> F::Output {
        match driver {
            Some(driver) => driver
                .0
                .as_ref()
                .expect("a driver's runtime is there until it is dropped")
                .block_on(future),
            None => future.await,
        }
    }
}

impl Drop for Driver {
    /// Without waiting: a connection may be dropped inside a runtime's task, where a runtime
    /// may not be shut down in the usual way.
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

impl Pool {
    pub fn new(
        options: PgConnectOptions,
        sessions: Sessions,
        direct: PgConnectOptions,
        size: u32,
        connect_timeout: Duration,
        acquire_timeout: Duration,
        schema: &str,
    ) -> Pool {
        Pool {
            options,
            sessions,
            direct,
            connect_timeout,
            acquire_timeout,
            size,
            schema: schema.to_owned(),
            slots: Semaphore::new(size as usize),
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Runs `work` on a connection and returns its outcome; the outer error is the pool's
    /// (no connection came free, none could be opened), the inner one the statement's.
    ///
    /// Waits up to the acquire timeout for a free connection, then fails as
    /// [`Error::PoolExhausted`]; opening a connection may take up to the connect timeout.
    pub async fn run<T>(
        &self,
        repeat: Repeat,
        work: impl AsyncFnOnce(&mut PgConnection) -> sqlx::Result<T> + Clone,
    ) -> Result<sqlx::Result<T>> {
        let _slot = tokio::time::timeout(self.acquire_timeout, self.slots.acquire())
            .await
            .map_err(|_| self.exhausted())?
            .map_err(|_| Error::Unavailable("the client is closed".into()))?;
        let mut lent = self.lend(repeat == Repeat::Never).await?;
        // A copy of the call (it borrows what it sends), in case it must go out again.
        let again = work.clone();
        let outcome = self.shielded(&mut lent, work).await?;
        let stale = lent.unchecked && outcome.as_ref().is_err_and(connection_lost);
        if repeat == Repeat::Safe && stale {
            // The connection died while idle: most likely the statement never reached a
            // server, and either way it may run again. The dead connection is dropped.
            drop(lent);
            let mut lent = self.lend(true).await?;
            let outcome = self.shielded(&mut lent, again).await?;
            return Ok(lent.finish(outcome));
        }
        Ok(lent.finish(outcome))
    }

    /// Runs `work` on the lent connection. An answer of a shape the driver does not expect (a
    /// row with fewer values than its statement's description, which a pooler that mixes up
    /// statements can cause) makes the driver panic rather than fail: that becomes a
    /// [`Error::Storage`]; the caller then drops `lent`, whose connection is in no known state.
    async fn shielded<T>(
        &self,
        lent: &mut Lent<'_>,
        work: impl AsyncFnOnce(&mut PgConnection) -> sqlx::Result<T>,
    ) -> Result<sqlx::Result<T>> {
        AssertUnwindSafe(lent.conn.run(self.sessions, work))
            .catch_unwind()
            .await
            .map_err(|panic| {
                let what = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("no message");
                Error::Storage(format!(
                    "PostgreSQL answered a statement of schema {} in a shape FlexiQ does not \
                     expect ({what}); if a connection pooler sits between them, it may be \
                     mixing up statements: check that its pool mode is session or transaction",
                    self.schema
                ))
            })
    }

    /// A statement as the pool's connections send it: prepared under a name and kept by the
    /// connection, or unnamed where sessions are shared (see [`Sessions`]).
    pub fn query<'q>(&self, sql: &'q str) -> Query<'q, Postgres, PgArguments> {
        sqlx::query(sql).persistent(self.sessions == Sessions::Own)
    }

    /// [`Pool::query`] returning rows as `O`.
    pub fn query_as<'q, O>(&self, sql: &'q str) -> QueryAs<'q, Postgres, O, PgArguments>
    where
        O: for<'r> FromRow<'r, PgRow>,
    {
        sqlx::query_as(sql).persistent(self.sessions == Sessions::Own)
    }

    /// [`Pool::query`] returning the first column as `O`.
    pub fn query_scalar<'q, O>(&self, sql: &'q str) -> QueryScalar<'q, Postgres, O, PgArguments>
    where
        (O,): for<'r> FromRow<'r, PgRow>,
    {
        sqlx::query_scalar(sql).persistent(self.sessions == Sessions::Own)
    }

    /// A connection: an idle one if there is one, a new one otherwise. With `check`, connections
    /// idle for longer than [`RECENT`] are pinged first and those that fail are dropped.
    async fn lend(&self, check: bool) -> Result<Lent<'_>> {
        let for_caller = caller::is_caller();
        while let Some((mut conn, since)) = self.take_idle(for_caller) {
            if !check || since.elapsed() < RECENT {
                return Ok(self.lent(conn, true));
            }
            // A ping that does not come back within the connect timeout (a network that drops
            // packets rather than refusing them) counts as failed.
            let timeout = self.connect_timeout;
            let ping = Driver::run(
                conn.driver.as_ref(),
                tokio::time::timeout(timeout, conn.connection.ping()),
            )
            .await;
            if matches!(ping, Ok(Ok(()))) {
                return Ok(self.lent(conn, false));
            }
        }
        let driver = for_caller.then(Driver::new).transpose()?;
        let open = tokio::time::timeout(self.connect_timeout, self.open());
        let connection = Driver::run(driver.as_ref(), open)
            .await
            .map_err(|_| self.unreachable())??;
        Ok(self.lent(Conn { connection, driver }, false))
    }

    /// A connection of its own, outside the pool and its limit, for a session that must outlive
    /// any one call (maintenance's election), to PostgreSQL directly when a URL for that was
    /// given; fails as [`Pool::run`] does when PostgreSQL cannot be reached within the connect
    /// timeout.
    pub async fn dedicated(&self) -> Result<PgConnection> {
        tokio::time::timeout(self.connect_timeout, tls::connect(&self.direct))
            .await
            .map_err(|_| self.unreachable())?
    }

    fn unreachable(&self) -> Error {
        unreachable(&self.options, self.connect_timeout)
    }

    /// A new connection, JIT compilation off, cached (generic) plans always used, and no
    /// sequential scans where an index can serve.
    ///
    /// FlexiQ's statements each read a handful of rows by index, but over a large table their
    /// generic plans cost more than `jit_above_cost`, and compiling them would take longer than
    /// running them (80-400 ms a claim over a million jobs). Planning anew is the same waste on a
    /// smaller scale: PostgreSQL would otherwise keep planning a claim for its parameters, and a
    /// claim of one job took 1.0-1.2 ms planned anew against 0.3-0.4 ms on its cached plan
    /// (pgbench). A cached plan is kept until the table is next analyzed: made on a table
    /// analyzed empty (a drained queue), every statement FlexiQ repeats scanned the whole table
    /// for each job of the backlog that followed, and 4 callers stored 1,255-2,654 new keys a
    /// second against 6,083-6,299 on the index. Every FlexiQ statement reads through an index,
    /// so sequential scans are turned off rather than weighed; the plans tests check each
    /// repeated statement's generic plan under skewed statistics, that case included. Plain
    /// `SET`s rather than startup options, which connection poolers such as pgbouncer refuse.
    ///
    /// Where sessions are shared, nothing is set: a setting would stay with the server session,
    /// which the pooler hands to other clients next (see [`Sessions`]).
    async fn open(&self) -> Result<PgConnection> {
        let mut connection = tls::connect(&self.options).await?;
        if self.sessions == Sessions::Own {
            connection
                .execute(
                    "SET jit = off; SET plan_cache_mode = force_generic_plan; \
                     SET enable_seqscan = off",
                )
                .await?;
        }
        Ok(connection)
    }

    fn lent(&self, conn: Conn, unchecked: bool) -> Lent<'_> {
        Lent {
            pool: self,
            conn,
            unchecked,
        }
    }

    /// The most recently used idle connection that this thread can drive, a caller's own kind
    /// first. A runtime's task that finds only callers' connections takes none; when the pool
    /// is full, it closes the least recently used of them to make room for its own.
    fn take_idle(&self, for_caller: bool) -> Option<(Conn, Instant)> {
        let mut idle = self
            .idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match idle
            .iter()
            .rposition(|(conn, _)| conn.driver.is_some() == for_caller)
        {
            Some(at) => Some(idle.remove(at)),
            None if for_caller => idle.pop(),
            None => {
                // Every permit taken, but the task's own, may stand for an open connection.
                let others = self.size as usize - self.slots.available_permits() - 1;
                let full = others + idle.len() >= self.size as usize;
                let closed = (full && !idle.is_empty()).then(|| idle.remove(0));
                // Closed outside the lock.
                drop(idle);
                drop(closed);
                None
            }
        }
    }

    fn exhausted(&self) -> Error {
        let connections = match self.size {
            1 => "the only connection".to_owned(),
            n => format!("all {n} connections"),
        };
        let were = if self.size == 1 { "was" } else { "were" };
        Error::PoolExhausted(format!(
            "{connections} of FlexiQ's pool for schema {} {were} busy for {:?}; raise poolSize \
             or acquireTimeout, or look for long-running statements",
            self.schema, self.acquire_timeout
        ))
    }
}

/// The custom setting the probe of [`sessions_behind`] leaves in a session.
const PROBE_SETTING: &str = "flexiq.session_probe";

/// Whether the server sessions behind connections to `options` are their own or shared
/// among a pooler's clients: a setting that one connection leaves in its session shows in the
/// next connection's when a pooler hands that one the same server session. Simple queries
/// only, which a pooler in any mode passes whole, and nothing is left behind.
pub(crate) async fn sessions_behind(
    options: &PgConnectOptions,
    timeout: Duration,
) -> Result<Sessions> {
    let probe = async {
        let token = format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        );
        let connect = || async {
            tokio::time::timeout(timeout, tls::connect(options))
                .await
                .map_err(|_| unreachable(options, timeout))?
        };
        let set = format!("SELECT set_config('{PROBE_SETTING}', '{token}', false)");
        let read = format!("SELECT current_setting('{PROBE_SETTING}', true)");
        let reset = format!("RESET {PROBE_SETTING}");
        let mut first = connect().await?;
        first.execute(set.as_str()).await?;
        let mut second = connect().await?;
        let row = second.fetch_one(read.as_str()).await?;
        let seen: Option<String> = row.try_get(0)?;
        for mut connection in [first, second] {
            // Wherever the setting stayed, it goes; a failure here changes nothing found.
            let _ = connection.execute(reset.as_str()).await;
            let _ = connection.close().await;
        }
        Ok::<_, Error>(if seen.as_deref() == Some(token.as_str()) {
            Sessions::Shared
        } else {
            Sessions::Own
        })
    };
    // Each connection has the connect timeout; the statements, as long again.
    tokio::time::timeout(timeout * 3, probe)
        .await
        .map_err(|_| unreachable(options, timeout))?
}

/// The error of a connection that did not open within `timeout`.
fn unreachable(options: &PgConnectOptions, timeout: Duration) -> Error {
    Error::Unavailable(format!(
        "could not connect to {} within {timeout:?}; check that PostgreSQL runs there and is \
         reachable, or raise connectTimeout",
        tls::target(options)
    ))
}

impl Lent<'_> {
    /// Returns the outcome of what ran on this connection, and the connection to the pool
    /// unless that outcome leaves it unusable: a lost connection, or any failure but a refused
    /// statement (a row that did not decode, say, may leave it mid-reply).
    fn finish<T>(self, outcome: sqlx::Result<T>) -> sqlx::Result<T> {
        let reusable = match &outcome {
            Ok(_) => true,
            Err(e @ sqlx::Error::Database(_)) => !connection_lost(e),
            Err(_) => false,
        };
        if reusable {
            self.pool
                .idle
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .push((self.conn, Instant::now()));
        }
        outcome
    }
}

/// Whether this error means the connection is gone: an I/O, TLS or protocol failure, or the
/// server ending the session (connection exceptions, 08; shutdown, crash, idle timeout, 57P).
fn connection_lost(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::Protocol(_) => true,
        sqlx::Error::Database(d) => d
            .code()
            .is_some_and(|c| c.starts_with("08") || c.starts_with("57P")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flexiq_local_pg::{LocalPostgres, Options};

    #[tokio::test]
    async fn connections_run_without_jit_or_sequential_scans_on_cached_plans_whatever_the_server_says(
    ) {
        let server = LocalPostgres::start(&Options {
            durable: false,
            settings: vec![
                ("jit".to_owned(), "on".to_owned()),
                ("plan_cache_mode".to_owned(), "force_custom_plan".to_owned()),
            ],
            ..Options::default()
        })
        .expect("start a throwaway PostgreSQL");
        let options = tls::connect_options(&server.url()).expect("options");
        let timeout = Duration::from_secs(10);
        let pool = Pool::new(
            options.clone(),
            Sessions::Own,
            options.clone(),
            1,
            timeout,
            timeout,
            "s",
        );
        for _ in 0..2 {
            let settings: (String, String, String) = pool
                .run(Repeat::Safe, async |c| {
                    sqlx::query_as(
                        "SELECT current_setting('jit'), current_setting('plan_cache_mode'),
                                current_setting('enable_seqscan')",
                    )
                    .fetch_one(c)
                    .await
                })
                .await
                .expect("a connection")
                .expect("the settings");
            assert_eq!(
                settings,
                ("off".into(), "force_generic_plan".into(), "off".into())
            );
        }
    }

    /// A statement whose answer breaks the driver (a panic inside it) fails as a storage error
    /// naming the schema, and its connection is dropped rather than reused.
    #[tokio::test]
    async fn an_answer_that_breaks_the_driver_is_a_storage_error_and_its_connection_is_dropped() {
        let (_server, options) = throwaway_server();
        let timeout = Duration::from_secs(10);
        let pool = Pool::new(
            options.clone(),
            Sessions::Own,
            options,
            1,
            timeout,
            timeout,
            "s",
        );
        let before = backend(&pool).await;
        let broken = pool
            .run(Repeat::Safe, async |c| {
                let row = sqlx::query("SELECT 1").fetch_one(c).await?;
                let values: Vec<i32> = Vec::new();
                // What the driver does with a row shorter than its description.
                Ok(values[row.len()])
            })
            .await;
        assert!(
            matches!(&broken, Err(Error::Storage(m)) if m.contains("schema s") && m.contains("shape")),
            "{broken:?}"
        );
        assert_ne!(backend(&pool).await, before, "a fresh connection");
    }

    /// A row of a type other than the one asked for fails the call; nothing panics.
    #[tokio::test]
    async fn a_mistyped_answer_fails_the_call() {
        let (_server, options) = throwaway_server();
        let timeout = Duration::from_secs(10);
        let pool = Pool::new(
            options.clone(),
            Sessions::Own,
            options,
            1,
            timeout,
            timeout,
            "s",
        );
        let mistyped: Result<sqlx::Result<(i64, bool)>> = pool
            .run(Repeat::Safe, async |c| {
                sqlx::query_as("SELECT 'x'::text, 1").fetch_one(c).await
            })
            .await;
        assert!(matches!(mistyped, Ok(Err(_))), "{mistyped:?}");
        let short: Result<sqlx::Result<(i64, bool, i64)>> = pool
            .run(Repeat::Safe, async |c| {
                sqlx::query_as("SELECT 1::bigint, true").fetch_one(c).await
            })
            .await;
        assert!(matches!(short, Ok(Err(_))), "{short:?}");
    }

    /// The pid of the backend behind the pool's one connection, idle after this call.
    async fn backend(pool: &Pool) -> i32 {
        pool.run(Repeat::Safe, async |c| {
            sqlx::query_scalar("SELECT pg_backend_pid()")
                .fetch_one(c)
                .await
        })
        .await
        .expect("a connection")
        .expect("the pid")
    }

    /// Makes the pool's first idle connection look given back `ago`.
    fn idle_since(pool: &Pool, ago: Duration) {
        pool.idle.lock().expect("idle list")[0].1 = Instant::now() - ago;
    }

    /// Whether the pool's idle connections are callers' own, the least recently used first.
    fn idle_kinds(pool: &Pool) -> Vec<bool> {
        let idle = pool.idle.lock().expect("idle list");
        idle.iter().map(|(conn, _)| conn.driver.is_some()).collect()
    }

    fn throwaway_server() -> (LocalPostgres, PgConnectOptions) {
        let server = LocalPostgres::start(&Options {
            durable: false,
            ..Options::default()
        })
        .expect("start a throwaway PostgreSQL");
        let options = tls::connect_options(&server.url()).expect("options");
        (server, options)
    }

    /// A runtime whose one worker a test can hold up.
    fn one_worker() -> Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime")
    }

    /// Where a test's calls come from: a thread blocked in the runtime's own `block_on`, which
    /// gets the runtime's connections, or a caller (`caller::block_on`), which drives its own.
    #[derive(Clone, Copy, Debug)]
    enum From {
        Runtime,
        Caller,
    }

    impl From {
        fn call<F: Future>(self, runtime: &Runtime, future: F) -> F::Output {
            match self {
                From::Runtime => runtime.block_on(future),
                From::Caller => caller::block_on(runtime.handle(), future),
            }
        }
    }

    #[test]
    fn only_a_connection_idle_for_a_while_is_pinged_before_a_statement_that_must_not_run_twice() {
        let (_server, options) = throwaway_server();
        let runtime = one_worker();
        for from in [From::Runtime, From::Caller] {
            from.call(&runtime, lost_connections_are_found_out(&options, from));
        }
    }

    async fn lost_connections_are_found_out(options: &PgConnectOptions, from: From) {
        let timeout = Duration::from_secs(10);
        let pool = Pool::new(
            options.clone(),
            Sessions::Own,
            options.clone(),
            1,
            timeout,
            timeout,
            "s",
        );
        let mut other = PgConnection::connect_with(options).await.expect("connect");
        let terminate = async |other: &mut PgConnection, pid: i32| {
            sqlx::query("SELECT pg_terminate_backend($1, 10000)")
                .bind(pid)
                .execute(other)
                .await
                .expect("terminate");
        };
        let once = async |pool: &Pool| {
            pool.run(Repeat::Never, async |c| {
                sqlx::query_scalar::<_, i32>("SELECT pg_backend_pid()")
                    .fetch_one(c)
                    .await
            })
            .await
            .expect("a connection")
        };

        // Idle for longer than RECENT: the ping finds it dead and a new connection serves.
        let pid = backend(&pool).await;
        terminate(&mut other, pid).await;
        idle_since(&pool, 2 * RECENT);
        let sent = once(&pool).await;
        assert_ne!(sent.expect("sent on a new connection"), pid, "{from:?}");

        // Given back moments ago: no ping, so the statement itself finds the connection lost,
        // and it is not sent again.
        let pid = backend(&pool).await;
        terminate(&mut other, pid).await;
        idle_since(&pool, Duration::ZERO);
        let lost = once(&pool).await.expect_err("sent on the dead connection");
        assert!(connection_lost(&lost), "{from:?}: {lost:?}");
        assert_ne!(once(&pool).await.expect("a new connection next"), pid);
        assert_eq!(
            idle_kinds(&pool),
            [matches!(from, From::Caller)],
            "{from:?} opened its own kind"
        );
    }

    #[test]
    fn a_caller_waits_on_its_own_connection_and_a_task_makes_room_for_its_own_only_when_full() {
        let (_server, options) = throwaway_server();
        let runtime = one_worker();
        let timeout = Duration::from_secs(10);

        // The runtime's one worker is held up until the caller's statement is answered: the
        // caller opens its connection and waits on its socket without that worker.
        let full = Pool::new(
            options.clone(),
            Sessions::Own,
            options.clone(),
            1,
            timeout,
            timeout,
            "s",
        );
        let (started, blocked) = std::sync::mpsc::channel();
        let (release, held) = std::sync::mpsc::channel::<()>();
        let blocker = runtime.spawn(async move {
            started.send(()).expect("the test waits");
            held.recv_timeout(Duration::from_secs(60)).is_ok()
        });
        blocked.recv().expect("the worker is held up");
        let callers = From::Caller.call(&runtime, backend(&full));
        release.send(()).expect("the worker waits");
        let released = runtime.block_on(blocker).expect("the blocker");
        assert!(
            released,
            "the caller's statement waited for the runtime's worker"
        );
        assert_eq!(idle_kinds(&full), [true]);

        // The runtime cannot drive a caller's connection: with the pool full, it closes that
        // one to open its own, which a caller then uses too.
        let runtimes = From::Runtime.call(&runtime, backend(&full));
        assert_ne!(runtimes, callers);
        assert_eq!(idle_kinds(&full), [false]);
        assert_eq!(From::Caller.call(&runtime, backend(&full)), runtimes);

        // With room in the pool, both kinds stay open, and each side takes its own.
        let roomy = Pool::new(
            options.clone(),
            Sessions::Own,
            options.clone(),
            2,
            timeout,
            timeout,
            "s",
        );
        let callers = From::Caller.call(&runtime, backend(&roomy));
        let runtimes = From::Runtime.call(&runtime, backend(&roomy));
        assert_ne!(runtimes, callers);
        assert_eq!(idle_kinds(&roomy), [true, false]);
        assert_eq!(From::Caller.call(&runtime, backend(&roomy)), callers);
        assert_eq!(From::Runtime.call(&runtime, backend(&roomy)), runtimes);
    }
}
