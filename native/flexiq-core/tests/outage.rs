//! PostgreSQL going away and coming back: calls fail fast and typed, and nothing is half-written.

mod common;

use std::time::{Duration, Instant};

use flexiq_core::{Client, ClientConfig, Error, JobRequest, Outcome};
use flexiq_local_pg::{LocalPostgres, Options};

fn batch(prefix: &str) -> Vec<JobRequest> {
    (0..50)
        .map(|i| {
            JobRequest::new("t", format!("[{i}]").into_bytes()).with_key(format!("{prefix}-{i}"))
        })
        .collect()
}

#[tokio::test]
async fn calls_fail_within_the_connect_timeout_and_succeed_whole_once_the_server_is_back() {
    let mut server = LocalPostgres::start(&Options {
        durable: false,
        ..Options::default()
    })
    .expect("start");
    let mut config = ClientConfig::new(server.url());
    config.schema = "outage".into();
    config.migrate = true;
    config.connect_timeout = Duration::from_secs(1);
    let client = Client::connect(&config).await.expect("connect");
    client
        .enqueue_many(&batch("before"))
        .await
        .expect("before the outage");

    server.shut_down().expect("shut down");
    let started = Instant::now();
    let err = client
        .enqueue_many(&batch("during"))
        .await
        .expect_err("server is down");
    assert!(matches!(err, Error::Unavailable(_)), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );

    server.restart().expect("restart");
    // A pooled connection from before the outage fails its next call as unavailable (writing
    // nothing) and is replaced.
    let mut again = client.enqueue_many(&batch("during")).await;
    for _ in 0..config.pool_size {
        match again {
            Err(Error::Unavailable(_)) => again = client.enqueue_many(&batch("during")).await,
            _ => break,
        }
    }
    let again = again.expect("after the outage");
    assert!(
        again.iter().all(|e| e.outcome == Outcome::Accepted),
        "no entry was written during the outage"
    );
    let pool = sqlx::PgPool::connect(&server.url()).await.expect("pool");
    let jobs: i64 = sqlx::query_scalar("SELECT count(*) FROM outage.jobs")
        .fetch_one(&pool)
        .await
        .expect("count");
    let bindings: i64 = sqlx::query_scalar("SELECT count(*) FROM outage.jobs WHERE key_held")
        .fetch_one(&pool)
        .await
        .expect("count");
    assert_eq!((jobs, bindings), (100, 100));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_migrations_apply_each_version_once() {
    let mut config = ClientConfig::new(common::server().url());
    config.schema = format!("migrate_race_{}", std::process::id());
    let mut racers = tokio::task::JoinSet::new();
    for _ in 0..4 {
        let config = config.clone();
        racers.spawn(async move {
            Client::connect(&config)
                .await
                .expect("connect")
                .migrate()
                .await
        });
    }
    let mut applied = 0;
    while let Some(run) = racers.join_next().await {
        applied += run.expect("task").expect("migrate");
    }
    let pool = sqlx::PgPool::connect(&common::server().url())
        .await
        .expect("pool");
    let versions: i64 = sqlx::query_scalar(&format!(
        "SELECT count(*) FROM {}.schema_migrations",
        config.schema
    ))
    .fetch_one(&pool)
    .await
    .expect("versions");
    assert_eq!(versions as usize, flexiq_core::schema::migration_count());
    assert_eq!(
        applied as i64, versions,
        "each version applied by exactly one racer"
    );
}
