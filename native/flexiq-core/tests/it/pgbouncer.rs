//! Through a real PgBouncer (Debian's, started per test in front of the test server), in
//! transaction mode and in session mode: exactly one job per key under a race, every enqueue
//! stored, workers woken and draining, one maintenance leader. In transaction mode a client
//! that would misbehave (no session of its own for wake-ups and the election) is refused at
//! connect, naming the fix.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use flexiq_core::{
    Attempt, Client, ClientConfig, Error, JobRequest, Maintained, Outcome, Retention,
};
use flexiq_local_pg::{LocalPgBouncer, PoolMode};

/// Fewer server sessions than one client's pool has connections, so that in transaction mode
/// consecutive transactions of one connection meet different sessions.
const SERVER_SESSIONS: u32 = 3;

fn bouncer(mode: PoolMode) -> LocalPgBouncer {
    // In session mode every client connection keeps a server session.
    let sessions = match mode {
        PoolMode::Transaction => SERVER_SESSIONS,
        PoolMode::Session => 60,
    };
    LocalPgBouncer::start(common::server().port(), mode, sessions).expect("start PgBouncer")
}

/// A migrated client on a schema of its own, its statements through `bouncer`, its own
/// sessions (wake-ups, the election) to the server directly when `direct` says so.
async fn client(bouncer: &LocalPgBouncer, schema: &str, direct: bool) -> Client {
    let mut config = ClientConfig::new(bouncer.url());
    config.schema = schema.to_owned();
    config.migrate = true;
    config.direct_url = direct.then(|| common::server().url());
    Client::connect(&config)
        .await
        .expect("connect through PgBouncer")
}

fn schema(name: &str) -> String {
    format!("bouncer_{name}_{}", std::process::id())
}

fn keyed(key: &str, payload: &str) -> JobRequest {
    JobRequest::new("t", payload.as_bytes().to_vec()).with_key(key)
}

#[tokio::test]
async fn in_transaction_mode_a_client_without_a_direct_url_is_refused_naming_the_fix() {
    let bouncer = bouncer(PoolMode::Transaction);
    let mut config = ClientConfig::new(bouncer.url());
    config.schema = schema("refused");
    let refused = Client::connect(&config).await.err().expect("refused");
    match refused {
        Error::InvalidArgument(m) => {
            assert!(
                m.contains("transaction mode") && m.contains("directUrl"),
                "{m}"
            )
        }
        other => panic!("expected an invalid argument, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn in_transaction_mode_every_guarantee_holds() {
    every_guarantee_holds(PoolMode::Transaction, "transaction", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn in_session_mode_every_guarantee_holds_without_a_direct_url() {
    every_guarantee_holds(PoolMode::Session, "session", false).await;
}

async fn every_guarantee_holds(mode: PoolMode, name: &str, direct: bool) {
    let bouncer = bouncer(mode);
    let schema = schema(name);
    let clients: Vec<Arc<Client>> = futures_join(3, || client(&bouncer, &schema, direct)).await;
    let first = Arc::clone(&clients[0]);

    // 16 callers × 50 calls on one key, from three clients: one job, every call its answer.
    let mut racers = tokio::task::JoinSet::new();
    for t in 0..16 {
        let client = Arc::clone(&clients[t % 3]);
        racers.spawn(async move {
            let mut ids = Vec::new();
            for _ in 0..50 {
                ids.push(
                    client
                        .producer()
                        .enqueue(&keyed("one-key", "{}"))
                        .await
                        .expect("a keyed call")
                        .job_id,
                );
            }
            ids
        });
    }
    let mut ids = Vec::new();
    while let Some(answers) = racers.join_next().await {
        ids.extend(answers.expect("task"));
    }
    assert_eq!(ids.len(), 800);
    assert!(ids.iter().all(|&id| id == ids[0]), "one job for one key");
    assert_eq!(common::job_count(&first).await, 1);

    // 1,000 single enqueues from 8 callers, half of them keyed, and two batches: all stored.
    let mut callers = tokio::task::JoinSet::new();
    for t in 0..8usize {
        let client = Arc::clone(&clients[t % 3]);
        callers.spawn(async move {
            for c in 0..125usize {
                let request = if c % 2 == 0 {
                    keyed(&format!("k-{t}-{c}"), "{}")
                } else {
                    JobRequest::new("t", format!("[{t},{c}]").into_bytes())
                };
                let job = client.producer().enqueue(&request).await.expect("enqueue");
                assert_eq!(job.outcome, Outcome::Accepted);
            }
        });
    }
    while let Some(done) = callers.join_next().await {
        done.expect("task");
    }
    let batch: Vec<JobRequest> = (0..100).map(|i| keyed(&format!("b-{i}"), "{}")).collect();
    first
        .producer()
        .enqueue_many(&batch)
        .await
        .expect("keyed batch");
    let replayed = first.producer().enqueue_many(&batch).await.expect("replay");
    assert!(replayed.iter().all(|e| e.outcome == Outcome::Replayed));
    let plain: Vec<JobRequest> = (0..100)
        .map(|i| JobRequest::new("t", format!("[{i}]").into_bytes()))
        .collect();
    first
        .producer()
        .enqueue_many(&plain)
        .await
        .expect("plain batch");
    assert_eq!(common::job_count(&first).await, 1 + 1000 + 200);

    // A worker waiting for work hears of a new job, and drains everything.
    let wakeups = clients[1].wakeups();
    let seen = wakeups.work_generation().await;
    // The listener connects in the background; its connecting counts as a wake-up.
    let seen = wakeups.await_work(seen, common::WITHIN).await;
    first
        .producer()
        .enqueue(&keyed("wake", "{}"))
        .await
        .expect("a job to wake for");
    let moved = wakeups.await_work(seen, Duration::from_secs(10)).await;
    assert_ne!(moved, seen, "no wake-up reached the worker");
    let queues = vec!["default".to_owned()];
    let tasks = vec!["t".to_owned()];
    let mut completed = 0;
    loop {
        let claimed = clients[1]
            .worker_store()
            .claim_next(&queues, &tasks, 100, Duration::from_secs(60), 7)
            .await
            .expect("claim");
        if claimed.is_empty() {
            break;
        }
        let attempts: Vec<Attempt> = claimed
            .iter()
            .map(|j| Attempt {
                job_id: j.id,
                attempt: j.attempt,
            })
            .collect();
        completed += clients[1]
            .worker_store()
            .complete(&attempts)
            .await
            .expect("complete")
            .len();
    }
    assert_eq!(completed, 1 + 1000 + 200 + 1);

    // Three clients try for maintenance: exactly one is elected, and stays so.
    let retention = Retention {
        completed_ms: 3_600_000,
        cancelled_ms: 3_600_000,
        dead_ms: 3_600_000,
        batch_size: 1000,
    };
    for _ in 0..3 {
        let mut elected = 0;
        for client in &clients {
            match client
                .maintenance()
                .maintain(&retention)
                .await
                .expect("tick")
            {
                Maintained::Ran(_) => elected += 1,
                Maintained::ElsewhereRun => {}
                Maintained::NotPermitted => panic!("the superuser may maintain"),
            }
        }
        assert_eq!(elected, 1, "exactly one maintenance leader");
    }
    first.drop_schema().await.expect("drop");
}

/// `n` clients made by `make`, one after another.
async fn futures_join<F, Fut>(n: usize, mut make: F) -> Vec<Arc<Client>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Client>,
{
    let mut clients = Vec::with_capacity(n);
    for _ in 0..n {
        clients.push(Arc::new(make().await));
    }
    clients
}
