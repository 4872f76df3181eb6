//! One throwaway PostgreSQL per test binary, and a fresh schema per test.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use flexiq_core::{Client, ClientConfig, Enqueued, Error, JobRequest};
use flexiq_local_pg::{LocalPostgres, Options};
use tokio::task::JoinSet;

static SERVER: OnceLock<LocalPostgres> = OnceLock::new();
static NEXT_SCHEMA: AtomicU32 = AtomicU32::new(0);

/// How long the binary may run. A test that hangs (a call waiting on a lock its test holds,
/// say) then fails the run, after libtest has named it as running for long, rather than
/// holding CI until CI gives up. Many times what every test together takes on a slow machine.
const RUN_LIMIT: Duration = Duration::from_secs(20 * 60);

/// The binary's server: statements and their parameters are logged (the raw-key test reads the
/// log) and pg_stat_statements counts round trips.
pub fn server() -> &'static LocalPostgres {
    SERVER.get_or_init(|| {
        let settings = [
            ("log_statement", "all"),
            ("shared_preload_libraries", "pg_stat_statements"),
            ("pg_stat_statements.track", "top"),
        ];
        let options = Options {
            durable: false,
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Options::default()
        };
        let server = LocalPostgres::start(&options).expect("start a throwaway PostgreSQL");
        std::thread::spawn(|| {
            std::thread::sleep(RUN_LIMIT);
            // The server's watchdog stops it once this process has gone.
            eprintln!("the integration tests ran for more than {RUN_LIMIT:?}: a test hangs");
            std::process::exit(101);
        });
        server
    })
}

/// A client on a schema of its own, migrated.
pub async fn client() -> Client {
    client_with_pool(8).await
}

pub async fn client_with_pool(pool_size: u32) -> Client {
    client_with(|config| config.pool_size = pool_size).await
}

/// A client on a schema of its own, migrated, configured by `configure` as well.
pub async fn client_with(configure: impl FnOnce(&mut ClientConfig)) -> Client {
    let n = NEXT_SCHEMA.fetch_add(1, Ordering::Relaxed);
    let mut config = ClientConfig::new(server().url());
    config.schema = format!("t{}_{}", std::process::id(), n);
    config.migrate = true;
    configure(&mut config);
    Client::connect(&config).await.expect("connect and migrate")
}

/// How long a test waits for something it expects to happen before it fails rather than hangs.
pub const WITHIN: Duration = Duration::from_secs(30);

/// Polls `check` until it holds, failing the test with `what` once [`WITHIN`] has passed: the
/// wait for an event that nothing announces, as short as the event allows.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + WITHIN;
    while !check().await {
        assert!(
            std::time::Instant::now() < deadline,
            "waited {WITHIN:?} for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until `condition`, an SQL boolean on the client's schema (`{schema}` is replaced),
/// holds: for a lease, window or retention to pass by the server's clock, the one the
/// statements under test read with now(). Each check is a transaction of its own, so that a
/// statement sent afterwards reads a later now().
pub async fn until_sql(client: &Client, condition: &str) {
    let pool = sqlx::PgPool::connect(&server().url())
        .await
        .expect("connect");
    let sql = format!(
        "SELECT coalesce(({}), false)",
        condition.replace("{schema}", client.schema())
    );
    let (pool_ref, sql_ref) = (&pool, &sql);
    eventually(condition, move || async move {
        sqlx::query_scalar::<_, bool>(sql_ref)
            .fetch_one(pool_ref)
            .await
            .expect("condition")
    })
    .await;
    pool.close().await;
}

/// Runs one query returning a single bigint, on the client's schema (`{schema}` is replaced).
pub async fn scalar(client: &Client, sql: &str) -> i64 {
    let pool = sqlx::PgPool::connect(&server().url())
        .await
        .expect("connect");
    let value: i64 = sqlx::query_scalar(&sql.replace("{schema}", client.schema()))
        .fetch_one(&pool)
        .await
        .expect("query");
    pool.close().await;
    value
}

/// Runs one query returning a single text, on the client's schema (`{schema}` is replaced).
pub async fn text(client: &Client, sql: &str) -> String {
    let pool = sqlx::PgPool::connect(&server().url())
        .await
        .expect("connect");
    let value: String = sqlx::query_scalar(&sql.replace("{schema}", client.schema()))
        .fetch_one(&pool)
        .await
        .expect("query");
    pool.close().await;
    value
}

/// A connection of its own to the binary's server, asking for durable commits: test servers
/// may run without them.
pub async fn durable_session() -> sqlx::PgConnection {
    use sqlx::Connection;
    let mut c = sqlx::PgConnection::connect(&server().url())
        .await
        .expect("connect");
    sqlx::query("SET synchronous_commit = on")
        .execute(&mut c)
        .await
        .expect("durable commits");
    c
}

/// The `synchronous_commit` in effect on `c`, in its transaction when one is open.
pub async fn synchronous_commit(c: &mut sqlx::PgConnection) -> String {
    sqlx::query_scalar("SELECT current_setting('synchronous_commit')")
        .fetch_one(c)
        .await
        .expect("setting")
}

/// Statements that inserted into the client's jobs table so far.
pub async fn insert_statements(client: &Client) -> i64 {
    statements_like(client, "%INSERT INTO {schema}.jobs%").await
}

/// Top-level statements so far whose text is like `pattern` (`{schema}` is replaced).
pub async fn statements_like(client: &Client, pattern: &str) -> i64 {
    execute(client, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements").await;
    scalar(
        client,
        &format!(
            "SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements
              WHERE query LIKE '{pattern}'"
        ),
    )
    .await
}

/// Enqueues `request` and returns its job's id, failing the test on an error.
pub async fn accepted(client: &Client, request: &JobRequest) -> i64 {
    client
        .producer()
        .enqueue(request)
        .await
        .unwrap_or_else(|e| panic!("enqueue of task {}: {e}", request.task))
        .job_id
}

pub async fn job_count(client: &Client) -> i64 {
    scalar(client, "SELECT count(*) FROM {schema}.jobs").await
}

/// Runs one statement on the client's schema (`{schema}` is replaced).
pub async fn execute(client: &Client, sql: &str) {
    let pool = sqlx::PgPool::connect(&server().url())
        .await
        .expect("connect");
    sqlx::query(&sql.replace("{schema}", client.schema()))
        .execute(&pool)
        .await
        .expect("statement");
    pool.close().await;
}

/// An exclusive lock on a schema's jobs table, held by a transaction on a connection of its
/// own until released: FlexiQ's statements on that table wait for it, holding their
/// connections.
pub struct JobsLock {
    connection: sqlx::PgConnection,
    schema: String,
}

impl JobsLock {
    pub async fn take(url: &str, schema: &str) -> JobsLock {
        use sqlx::Connection;
        let mut connection = sqlx::PgConnection::connect(url).await.expect("connect");
        sqlx::raw_sql(&format!(
            "BEGIN; LOCK TABLE {schema}.jobs IN ACCESS EXCLUSIVE MODE"
        ))
        .execute(&mut connection)
        .await
        .expect("lock");
        JobsLock {
            connection,
            schema: schema.to_owned(),
        }
    }

    /// Starts one enqueue per request, each once the ones before wait for the lock, so that
    /// each holds a connection of its own: started together, concurrent single enqueues may
    /// share one statement.
    pub async fn hold(
        &mut self,
        client: &Arc<Client>,
        requests: impl IntoIterator<Item = JobRequest>,
    ) -> Calls {
        let mut calls = Calls::default();
        for (i, request) in requests.into_iter().enumerate() {
            calls.start(client, request);
            self.waiters(i + 1).await;
        }
        calls
    }

    /// Waits until `n` statements on the schema wait for a lock; returns their server
    /// processes.
    pub async fn waiters(&mut self, n: usize) -> Vec<i32> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            // Activity is read once per transaction unless the snapshot is cleared.
            sqlx::query("SELECT pg_stat_clear_snapshot()")
                .execute(&mut self.connection)
                .await
                .expect("clear");
            // By the lock they wait for: a statement's text may name the table only past the
            // first kilobyte, all that pg_stat_activity keeps of it by default.
            let pids: Vec<i32> = sqlx::query_scalar(
                "SELECT DISTINCT pid FROM pg_locks
                  WHERE NOT granted AND relation = to_regclass($1)",
            )
            .bind(format!("{}.jobs", self.schema))
            .fetch_all(&mut self.connection)
            .await
            .expect("activity");
            if pids.len() >= n {
                return pids;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{} of {n} statements waited for the lock",
                pids.len()
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Ends the session of a server process, as an administrator or a failover would.
    pub async fn terminate(&mut self, pid: i32) {
        let ended: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
            .bind(pid)
            .fetch_one(&mut self.connection)
            .await
            .expect("terminate");
        assert!(ended, "process {pid} was there to end");
        // Gone before anything else happens, so that it cannot go on past a lock released next.
        let deadline = std::time::Instant::now() + WITHIN;
        loop {
            sqlx::query("SELECT pg_stat_clear_snapshot()")
                .execute(&mut self.connection)
                .await
                .expect("clear");
            let alive: bool =
                sqlx::query_scalar("SELECT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $1)")
                    .bind(pid)
                    .fetch_one(&mut self.connection)
                    .await
                    .expect("activity");
            if !alive {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "process {pid} still there {WITHIN:?} after it was ended"
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    pub async fn release(mut self) {
        sqlx::raw_sql("COMMIT")
            .execute(&mut self.connection)
            .await
            .expect("release");
    }
}

/// Enqueues running on their own tasks, answered in the order they finish.
#[derive(Default)]
pub struct Calls(JoinSet<Result<Enqueued, Error>>);

impl Calls {
    /// How long a test waits for an answer before it fails rather than hangs.
    const WITHIN: Duration = Duration::from_secs(60);

    pub fn start(&mut self, client: &Arc<Client>, request: JobRequest) {
        let client = client.clone();
        self.0
            .spawn(async move { client.producer().enqueue(&request).await });
    }

    /// The next answer; `None` once every call has answered. Fails the test when no answer
    /// comes within a minute.
    pub async fn next(&mut self) -> Option<Result<Enqueued, Error>> {
        tokio::time::timeout(Self::WITHIN, self.0.join_next())
            .await
            .expect("a call answers within a minute")
            .map(|call| call.expect("task"))
    }
}

/// Keyed enqueue statements so far, of single calls alone or together: the inserts of free keys
/// and the answers to held ones.
pub async fn enqueues(client: &Client) -> i64 {
    statements_like(client, "%INSERT INTO {schema}.jobs%ON CONFLICT%").await
        + statements_like(client, "%{schema}.enqueue_keyed(%").await
}

/// `tasks` callers making `calls` keyed calls each at once, with the key `key(task, call)`;
/// every answer, in no order.
pub async fn burst(
    client: &Arc<Client>,
    tasks: usize,
    calls: usize,
    key: fn(usize, usize) -> String,
) -> Vec<Enqueued> {
    let handles: Vec<_> = (0..tasks)
        .map(|t| {
            let client = client.clone();
            tokio::spawn(async move {
                let mut answers = Vec::new();
                for c in 0..calls {
                    let request =
                        JobRequest::new("charge_customer", b"{}".to_vec()).with_key(key(t, c));
                    answers.push(client.producer().enqueue(&request).await.expect("enqueued"));
                }
                answers
            })
        })
        .collect();
    let mut answers = Vec::new();
    for handle in handles {
        answers.extend(handle.await.expect("task"));
    }
    answers
}
