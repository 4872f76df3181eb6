//! The client's connection pool: a call waits for a busy pool up to the acquire timeout, then
//! fails naming the pool; a statement that may run twice runs again when its idle connection
//! turns out to be dead, and one that may not never does.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Calls, JobsLock};
use flexiq_core::{Error, JobRequest, Outcome};
use sqlx::Connection;

fn keyed(key: &str) -> JobRequest {
    JobRequest::new("t", b"{}".to_vec()).with_key(key)
}

fn unkeyed() -> JobRequest {
    JobRequest::new("t", b"{}".to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_wait_for_a_busy_pool_then_fail_naming_it_after_the_acquire_timeout() {
    let client = Arc::new(
        common::client_with(|c| {
            c.pool_size = 2;
            c.acquire_timeout = Duration::from_millis(300);
        })
        .await,
    );
    let mut lock = JobsLock::take(&common::server().url(), client.schema()).await;
    let mut holding = lock.hold(&client, [keyed("held0"), keyed("held1")]).await;
    let started = Instant::now();
    let mut late = Calls::default();
    late.start(&client, keyed("late0"));
    late.start(&client, keyed("late1"));
    for _ in 0..2 {
        match late.next().await.expect("a call") {
            Err(Error::PoolExhausted(message)) => assert_eq!(
                message,
                format!(
                    "all 2 connections of FlexiQ's pool for schema {} were busy for 300ms; \
                     raise poolSize or acquireTimeout, or look for long-running statements",
                    client.schema()
                )
            ),
            other => panic!("expected the pool to be exhausted, got {other:?}"),
        }
    }
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "they waited"
    );
    lock.release().await;
    while let Some(answer) = holding.next().await {
        let enqueued = answer.expect("the calls holding connections go on");
        assert_eq!(enqueued.outcome, Outcome::Accepted);
    }
    assert_eq!(common::job_count(&client).await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_waiting_for_a_busy_pool_go_ahead_once_a_connection_comes_free() {
    // The wait is bounded by the acquire timeout, not by the much shorter connect timeout
    // (still long enough to open the pool's second connection on a busy test machine).
    let client = Arc::new(
        common::client_with(|c| {
            c.pool_size = 2;
            c.connect_timeout = Duration::from_secs(1);
        })
        .await,
    );
    let mut lock = JobsLock::take(&common::server().url(), client.schema()).await;
    let mut calls = lock.hold(&client, [keyed("held0"), keyed("held1")]).await;
    calls.start(&client, keyed("late0"));
    calls.start(&client, keyed("late1"));
    // Real time must pass, well past the connect timeout, while the late calls wait for a
    // connection: only then does a wait bounded by the connect timeout fail them.
    tokio::time::sleep(Duration::from_secs(2)).await;
    lock.release().await;
    let mut accepted = 0;
    while let Some(answer) = calls.next().await {
        let enqueued = answer.expect("every call gets a connection in time");
        assert_eq!(enqueued.outcome, Outcome::Accepted);
        accepted += 1;
    }
    assert_eq!(accepted, 4);
    assert_eq!(common::job_count(&client).await, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unkeyed_insert_whose_connection_ends_mid_statement_is_not_sent_again() {
    let client = Arc::new(common::client_with_pool(1).await);
    let mut lock = JobsLock::take(&common::server().url(), client.schema()).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.producer().enqueue(&unkeyed()).await }
    });
    let waiting = lock.waiters(1).await;
    lock.terminate(waiting[0]).await;
    lock.release().await;
    let outcome = call.await.expect("task");
    assert!(matches!(outcome, Err(Error::Unavailable(_))), "{outcome:?}");
    assert_eq!(
        common::job_count(&client).await,
        0,
        "a second run could have inserted the job twice"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyed_enqueue_whose_idle_connection_ends_mid_statement_runs_again() {
    let client = Arc::new(common::client_with_pool(1).await);
    let mut lock = JobsLock::take(&common::server().url(), client.schema()).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.producer().enqueue(&keyed("again")).await }
    });
    let first = lock.waiters(1).await;
    lock.terminate(first[0]).await;
    // The second run waits for the lock as the first did, on a connection of its own.
    let second = lock.waiters(1).await;
    assert_ne!(first, second);
    lock.release().await;
    let enqueued = call.await.expect("task").expect("the repeat succeeds");
    assert_eq!(enqueued.outcome, Outcome::Accepted);
    assert_eq!(common::job_count(&client).await, 1);
}

/// A server at its connection limit (here the role's) refuses the pool a second connection:
/// calls then wait for the pool's one connection to come back, within the acquire timeout,
/// rather than fail at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn at_the_servers_connection_limit_calls_wait_for_the_pools_own_connections() {
    let role = format!("limited_{}", std::process::id());
    let admin = sqlx::PgPool::connect(&common::server().url())
        .await
        .expect("admin");
    // Not a superuser: superusers are exempt from a role's connection limit.
    for statement in [
        format!("CREATE ROLE {role} LOGIN CONNECTION LIMIT 2"),
        format!("GRANT CREATE ON DATABASE postgres TO {role}"),
    ] {
        sqlx::query(&statement).execute(&admin).await.expect("role");
    }
    let url = format!(
        "postgres://{role}@127.0.0.1:{}/postgres",
        common::server().port()
    );
    let client = Arc::new(
        common::client_with(|config| {
            config.url = url.clone();
            config.pool_size = 2;
            config.acquire_timeout = Duration::from_secs(30);
        })
        .await,
    );
    // Another application takes one of the role's two connections; the pool keeps the other.
    let mut other = sqlx::PgConnection::connect(&url)
        .await
        .expect("the other application");
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..8 {
        let client = Arc::clone(&client);
        calls.spawn(async move {
            for j in 0..20 {
                client
                    .producer()
                    .enqueue(&keyed(&format!("limit-{i}-{j}")))
                    .await?;
            }
            Ok::<_, Error>(())
        });
    }
    let mut failed = Vec::new();
    while let Some(done) = calls.join_next().await {
        if let Err(e) = done.expect("task") {
            failed.push(e.to_string());
        }
    }
    assert_eq!(failed, Vec::<String>::new());
    assert_eq!(common::job_count(&client).await, 160);
    let open: i64 = sqlx::query_scalar(&format!(
        "SELECT count(*) FROM pg_stat_activity WHERE usename = '{role}'"
    ))
    .fetch_one(&mut other)
    .await
    .expect("sessions");
    assert_eq!(open, 2, "the role stayed at its limit");
    client.drop_schema().await.expect("drop");
    drop(other);
    admin.close().await;
}
