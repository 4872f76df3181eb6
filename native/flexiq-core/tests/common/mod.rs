//! One throwaway PostgreSQL per test binary, and a fresh schema per test.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

use flexiq_core::{Client, ClientConfig};
use flexiq_local_pg::{LocalPostgres, Options};

static SERVER: OnceLock<LocalPostgres> = OnceLock::new();
static NEXT_SCHEMA: AtomicU32 = AtomicU32::new(0);

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
        LocalPostgres::start(&options).expect("start a throwaway PostgreSQL")
    })
}

/// A client on a schema of its own, migrated.
pub async fn client() -> Client {
    client_with_pool(8).await
}

pub async fn client_with_pool(pool_size: u32) -> Client {
    let n = NEXT_SCHEMA.fetch_add(1, Ordering::Relaxed);
    let mut config = ClientConfig::new(server().url());
    config.schema = format!("t{}_{}", std::process::id(), n);
    config.pool_size = pool_size;
    config.migrate = true;
    Client::connect(&config).await.expect("connect and migrate")
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
