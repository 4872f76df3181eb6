//! The client's connection pool: a call waits for a busy pool up to the acquire timeout, then
//! fails naming the pool; a statement that may run twice runs again when its idle connection
//! turns out to be dead, and one that may not never does.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::JobsLock;
use flexiq_core::{Client, Enqueued, Error, JobRequest, Outcome};
use tokio::task::JoinSet;

fn keyed(key: &str) -> JobRequest {
    JobRequest::new("t", b"{}".to_vec()).with_key(key)
}

fn unkeyed() -> JobRequest {
    JobRequest::new("t", b"{}".to_vec())
}

/// Starts `n` keyed enqueues at once.
fn enqueue_keyed(client: &Arc<Client>, n: usize) -> JoinSet<Result<Enqueued, Error>> {
    let mut calls = JoinSet::new();
    for i in 0..n {
        let client = client.clone();
        calls.spawn(async move { client.enqueue(&keyed(&format!("k{i}"))).await });
    }
    calls
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
    let started = Instant::now();
    let mut calls = enqueue_keyed(&client, 4);
    // Two calls hold both connections, waiting for the lock; the other two wait for them.
    lock.waiters(2).await;
    for _ in 0..2 {
        match calls.join_next().await.expect("a call").expect("task") {
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
    while let Some(call) = calls.join_next().await {
        let enqueued = call
            .expect("task")
            .expect("the calls holding connections go on");
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
    let mut calls = enqueue_keyed(&client, 4);
    lock.waiters(2).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    lock.release().await;
    while let Some(call) = calls.join_next().await {
        let enqueued = call
            .expect("task")
            .expect("every call gets a connection in time");
        assert_eq!(enqueued.outcome, Outcome::Accepted);
    }
    assert_eq!(common::job_count(&client).await, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unkeyed_insert_whose_connection_ends_mid_statement_is_not_sent_again() {
    let client = Arc::new(common::client_with_pool(1).await);
    let mut lock = JobsLock::take(&common::server().url(), client.schema()).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.enqueue(&unkeyed()).await }
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
        async move { client.enqueue(&keyed("again")).await }
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
