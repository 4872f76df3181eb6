//! Checkpoints that later attempts read back, redrives under their own keys, and wake-ups.

use crate::common;

use std::time::{Duration, Instant};

use flexiq_core::{Attempt, Client, Error, JobRequest, Redrive};

const LEASE: Duration = Duration::from_secs(30);

async fn run_once(client: &Client, task: &str) -> Attempt {
    let claimed = client
        .worker_store()
        .claim(&["default".to_string()], &[task.to_string()], 1, LEASE, 1)
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1, "one job due");
    Attempt {
        job_id: claimed[0].id,
        attempt: claimed[0].attempt,
    }
}

/// Enqueues a single-attempt keyed job and fails it into the dead letters.
async fn dead_job(client: &Client, key: &str) -> i64 {
    let mut request = JobRequest::new("charge", b"{}".to_vec()).with_key(key);
    request.max_attempts = 1;
    let id = common::accepted(client, &request).await;
    let attempt = run_once(client, "charge").await;
    let failed = client
        .worker_store()
        .fail(attempt, "card declined")
        .await
        .expect("fail");
    assert_eq!(failed.expect("held").state, "dead");
    id
}

#[tokio::test]
async fn a_later_attempt_reads_the_checkpoints_of_an_earlier_one() {
    let client = common::client().await;
    let id = common::accepted(&client, &JobRequest::new("two_stages", b"{}".to_vec())).await;
    let first = run_once(&client, "two_stages").await;
    assert_eq!(
        client
            .worker_store()
            .checkpoint(id, "charged")
            .await
            .expect("read"),
        None
    );
    assert!(client
        .worker_store()
        .save_checkpoint(first, "charged", b"ch_123")
        .await
        .expect("save"));
    client
        .worker_store()
        .fail(first, "stage two failed")
        .await
        .expect("fail");
    assert!(
        !client
            .worker_store()
            .save_checkpoint(first, "late", b"x")
            .await
            .expect("save"),
        "an attempt that no longer holds the job stores nothing"
    );

    common::execute(&client, "UPDATE {schema}.jobs SET run_at = now()").await;
    let second = run_once(&client, "two_stages").await;
    assert_eq!(second.attempt, 2);
    assert_eq!(
        client
            .worker_store()
            .checkpoint(id, "charged")
            .await
            .expect("read")
            .as_deref(),
        Some(&b"ch_123"[..])
    );
    assert_eq!(
        client
            .worker_store()
            .checkpoint(id, "late")
            .await
            .expect("read"),
        None
    );
    let too_big = vec![0u8; flexiq_core::worker_store::MAX_CHECKPOINT_BYTES + 1];
    assert!(matches!(
        client
            .worker_store()
            .save_checkpoint(second, "big", &too_big)
            .await,
        Err(Error::InvalidArgument(_))
    ));
}

#[tokio::test]
async fn a_redrive_puts_a_dead_job_back_once_per_redrive_key() {
    let client = common::client().await;
    let id = dead_job(&client, "order-1").await;
    let other = dead_job(&client, "order-2").await;
    assert_eq!(
        client
            .operations()
            .redrive(id, "redrive-1")
            .await
            .expect("redrive"),
        Redrive::Redriven
    );
    let info = client
        .operations()
        .get_job(id)
        .await
        .expect("get")
        .expect("job");
    assert_eq!((info.state.as_str(), info.attempt), ("available", 0));
    assert!(info.key_held, "the redriven job holds its key again");
    assert_eq!(
        client
            .operations()
            .redrive(id, "redrive-1")
            .await
            .expect("again"),
        Redrive::Replayed
    );

    let attempt = run_once(&client, "charge").await;
    assert_eq!(attempt.attempt, 1, "attempts start over");
    client
        .worker_store()
        .fail(attempt, "declined again")
        .await
        .expect("fail");
    assert_eq!(
        client
            .operations()
            .redrive(id, "redrive-1")
            .await
            .expect("old request"),
        Redrive::Replayed,
        "a repeated request does not redrive twice"
    );
    assert_eq!(
        client
            .operations()
            .get_job(id)
            .await
            .expect("get")
            .expect("job")
            .state,
        "dead"
    );
    assert_eq!(
        client
            .operations()
            .redrive(id, "redrive-2")
            .await
            .expect("new request"),
        Redrive::Redriven
    );
    assert!(matches!(
        client.operations().redrive(other, "redrive-2").await,
        Err(Error::InvalidArgument(m)) if m.contains(&format!("job {id}"))
    ));
    assert_eq!(
        client
            .operations()
            .redrive(id, "redrive-3")
            .await
            .expect("pending"),
        Redrive::NotDead {
            state: "available".into()
        }
    );
    assert_eq!(
        client
            .operations()
            .redrive(i64::MAX, "redrive-4")
            .await
            .expect("none"),
        Redrive::NotFound
    );
}

#[tokio::test]
async fn a_redrive_leaves_a_dead_job_alone_while_a_newer_job_holds_its_key() {
    let client = common::client().await;
    let dead = dead_job(&client, "order-7").await;
    let mut newer = JobRequest::new("charge", b"{}".to_vec()).with_key("order-7");
    newer.max_attempts = 1;
    let newer = common::accepted(&client, &newer).await;
    assert_ne!(newer, dead);
    assert_eq!(
        client
            .operations()
            .redrive(dead, "redrive-7")
            .await
            .expect("redrive"),
        Redrive::KeyHeld { holder: newer }
    );
    assert_eq!(
        client
            .operations()
            .get_job(dead)
            .await
            .expect("get")
            .expect("job")
            .state,
        "dead"
    );
    let held = common::scalar(
        &client,
        "SELECT count(*) FROM {schema}.jobs WHERE key_held AND state <> 'dead'",
    )
    .await;
    assert_eq!(held, 1, "one active job holds the key");

    client.operations().cancel(newer).await.expect("cancel");
    assert_eq!(
        client
            .operations()
            .redrive(dead, "redrive-7")
            .await
            .expect("key free"),
        Redrive::Redriven,
        "refused requests leave their redrive key unused"
    );
}

#[tokio::test]
async fn accepted_jobs_wake_waiting_workers_and_replays_do_not() {
    let client = common::client().await;
    let keyed = JobRequest::new("charge", b"{}".to_vec()).with_key("wake-1");
    let seen = client.wakeups().work_generation().await;
    // The listener announces itself once it listens.
    let seen = client
        .wakeups()
        .await_work(seen, Duration::from_secs(5))
        .await;

    let started = Instant::now();
    client.producer().enqueue(&keyed).await.expect("accepted");
    let woke = client
        .wakeups()
        .await_work(seen, Duration::from_secs(5))
        .await;
    assert_ne!(woke, seen, "an accepted job wakes workers");
    assert!(started.elapsed() < Duration::from_secs(5));

    client.producer().enqueue(&keyed).await.expect("replayed");
    let after_replay = client
        .wakeups()
        .await_work(woke, Duration::from_millis(500))
        .await;
    assert_eq!(after_replay, woke, "a replay announces nothing");

    client.wakeups().wake_workers();
    assert_ne!(
        client
            .wakeups()
            .await_work(after_replay, Duration::from_secs(5))
            .await,
        after_replay
    );
}

#[tokio::test]
async fn the_listener_reconnects_by_itself_after_losing_its_connection() {
    let client = common::client().await;
    let seen = client.wakeups().work_generation().await;
    let seen = client
        .wakeups()
        .await_work(seen, Duration::from_secs(5))
        .await;
    let channel = format!("LISTEN \"flexiq_{}\"", client.schema());
    let listening = format!(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query = '{channel}'"
    );
    assert_eq!(
        common::scalar(&client, &listening).await,
        1,
        "one listening connection"
    );

    // Losing the connection and listening again count as wake-ups (announcements may have
    // been missed meanwhile); wait until they have settled.
    let mut reconnected = client
        .wakeups()
        .await_work(seen, Duration::from_secs(10))
        .await;
    assert_ne!(reconnected, seen, "the listener noticed");
    loop {
        let next = client
            .wakeups()
            .await_work(reconnected, Duration::from_millis(1500))
            .await;
        if next == reconnected {
            break;
        }
        reconnected = next;
    }
    client
        .producer()
        .enqueue(&JobRequest::new("charge", b"{}".to_vec()))
        .await
        .expect("enqueue");
    assert_ne!(
        client
            .wakeups()
            .await_work(reconnected, Duration::from_secs(10))
            .await,
        reconnected,
        "announcements arrive over the new connection"
    );
}
