//! PostgreSQL going away and coming back: calls fail fast and typed while it is away, nothing
//! is half-written, and once it is back no call fails for a connection from before.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::JobsLock;
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
        .producer()
        .enqueue_many(&batch("before"))
        .await
        .expect("before the outage");

    server.shut_down().expect("shut down");
    let started = Instant::now();
    let err = client
        .producer()
        .enqueue_many(&batch("during"))
        .await
        .expect_err("server is down");
    assert!(matches!(err, Error::Unavailable(_)), "{err}");
    let port = server
        .url()
        .rsplit(':')
        .next()
        .and_then(|p| p.split('/').next())
        .unwrap_or_default()
        .to_string();
    assert!(
        err.to_string().contains(&format!(
            "connecting to 127.0.0.1:{port} (database postgres, user postgres)"
        )),
        "says where it tried: {err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );

    server.restart().expect("restart");
    // The pooled connection from before the outage is dead; the keyed batch runs again on a
    // new one.
    let again = client
        .producer()
        .enqueue_many(&batch("during"))
        .await
        .expect("after the outage");
    assert!(
        again.iter().all(|e| e.outcome == Outcome::Accepted),
        "no entry was written during the outage"
    );
    let pool = sqlx::PgPool::connect(&server.url()).await.expect("pool");
    let jobs: i64 = sqlx::query_scalar("SELECT count(*) FROM outage.jobs")
        .fetch_one(&pool)
        .await
        .expect("count");
    let held: i64 = sqlx::query_scalar("SELECT count(*) FROM outage.jobs WHERE key_held")
        .fetch_one(&pool)
        .await
        .expect("count");
    assert_eq!((jobs, held), (100, 100));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_full_of_connections_from_before_a_restart_fails_no_call() {
    let mut server = LocalPostgres::start(&Options {
        durable: false,
        ..Options::default()
    })
    .expect("start");
    let mut config = ClientConfig::new(server.url());
    config.schema = "restart".into();
    config.migrate = true;
    let client = Arc::new(Client::connect(&config).await.expect("connect"));

    // Fill the pool: as many enqueues as it has connections, all held at once by a lock.
    let mut lock = JobsLock::take(&server.url(), "restart").await;
    let requests =
        (0..config.pool_size).map(|i| JobRequest::new("t", format!("[{i}]").into_bytes()));
    let mut calls = lock.hold(&client, requests).await;
    lock.release().await;
    while let Some(answer) = calls.next().await {
        answer.expect("before the restart");
    }

    server.shut_down().expect("shut down");
    server.restart().expect("restart");

    // Every pooled connection is dead now. Keyed and unkeyed enqueues alike succeed: keyed
    // ones run again on a new connection, unkeyed ones only go out on a checked one.
    for i in 0..20 {
        let request = JobRequest::new("t", format!("[{i}]").into_bytes());
        let request = if i % 2 == 0 {
            request.with_key(format!("after-{i}"))
        } else {
            request
        };
        calls.start(&client, request);
    }
    let mut failures = Vec::new();
    while let Some(answer) = calls.next().await {
        match answer {
            Ok(enqueued) => assert_eq!(enqueued.outcome, Outcome::Accepted),
            Err(e) => failures.push(e.to_string()),
        }
    }
    assert_eq!(failures, Vec::<String>::new());
    let pool = sqlx::PgPool::connect(&server.url()).await.expect("pool");
    let jobs: i64 = sqlx::query_scalar("SELECT count(*) FROM restart.jobs")
        .fetch_one(&pool)
        .await
        .expect("count");
    assert_eq!(
        jobs,
        i64::from(config.pool_size) + 20,
        "each call wrote its job once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_migrations_apply_each_version_and_definition_once() {
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
    let count = |table: &str| {
        let sql = format!("SELECT count(*) FROM {}.{table}", config.schema);
        let pool = pool.clone();
        async move {
            let n: i64 = sqlx::query_scalar(&sql)
                .fetch_one(&pool)
                .await
                .expect("count");
            n as usize
        }
    };
    let versions = count("schema_migrations").await;
    let definitions = count("schema_definitions").await;
    assert_eq!(versions, flexiq_core::schema::migration_count());
    assert_eq!(definitions, flexiq_core::schema::definition_count());
    assert_eq!(
        applied,
        versions + definitions,
        "each version and definition applied by exactly one racer"
    );
}
