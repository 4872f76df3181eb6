//! Outcomes that reach PostgreSQL after their lease passed: recorded while no later attempt of
//! the job started, refused once one has; and leases that passed while the server was down,
//! rescued only a lease after it came back.

use crate::common;

use std::time::Duration;

use flexiq_core::{Attempt, Client, ClientConfig, Completed, JobRequest, RetryPolicy};
use flexiq_local_pg::{LocalPostgres, Options};

const QUEUES: [&str; 1] = ["default"];

fn job(n: i64, max_attempts: i32) -> JobRequest {
    let mut request = JobRequest::new("late", format!("{{\"n\":{n}}}").into_bytes())
        .with_key(format!("late-{n}"));
    request.max_attempts = max_attempts;
    request
}

async fn claim(client: &Client, lease: Duration) -> Vec<Attempt> {
    let queues: Vec<String> = QUEUES.iter().map(|q| q.to_string()).collect();
    client
        .worker_store()
        .claim(&queues, &["late".to_string()], 10, lease, 7)
        .await
        .expect("claim")
        .iter()
        .map(|j| Attempt {
            job_id: j.id,
            attempt: j.attempt,
        })
        .collect()
}

/// Claims job `id` under a 1 ms lease and rescues it once the lease has passed by the server's
/// clock; returns the attempt the rescue took it from.
async fn claimed_and_rescued(client: &Client, id: i64) -> Attempt {
    let attempts = claim(client, Duration::from_millis(1)).await;
    assert_eq!(attempts.len(), 1);
    common::until_sql(
        client,
        &format!("SELECT lease_expires_at < now() FROM {{schema}}.jobs WHERE id = {id}"),
    )
    .await;
    let rescued = client
        .worker_store()
        .rescue_expired()
        .await
        .expect("rescue");
    assert_eq!(rescued.iter().map(|r| r.id).collect::<Vec<_>>(), [id]);
    attempts[0]
}

async fn state_and_attempt(client: &Client, id: i64) -> (String, i32, Option<String>, bool) {
    let info = client
        .operations()
        .get_job(id)
        .await
        .expect("get")
        .expect("job");
    (info.state, info.attempt, info.last_error, info.key_held)
}

#[tokio::test]
async fn a_completion_after_a_rescue_is_recorded_while_no_later_attempt_started() {
    let client = common::client().await;
    let retried = common::accepted(&client, &job(1, 3)).await;
    let first = claimed_and_rescued(&client, retried).await;
    assert_eq!(
        state_and_attempt(&client, retried).await.0,
        "retryable",
        "rescued as a failed attempt"
    );
    assert_eq!(
        client
            .worker_store()
            .complete(&[first])
            .await
            .expect("complete"),
        [Completed {
            attempt: first,
            late: true
        }]
    );
    let (state, attempt, _, key_held) = state_and_attempt(&client, retried).await;
    assert_eq!(
        (state.as_str(), attempt),
        ("completed", 1),
        "the rescue is not counted"
    );
    assert!(!key_held, "completing releases the key");

    // A last attempt: the rescue dead-lettered the job, and the completion still lands.
    let dead = common::accepted(&client, &job(2, 1)).await;
    let only = claimed_and_rescued(&client, dead).await;
    assert_eq!(state_and_attempt(&client, dead).await.0, "dead");
    let done = client
        .worker_store()
        .complete(&[only])
        .await
        .expect("complete");
    assert_eq!(
        done,
        [Completed {
            attempt: only,
            late: true
        }]
    );
    assert_eq!(state_and_attempt(&client, dead).await.0, "completed");
    assert!(
        client
            .worker_store()
            .complete(&[only])
            .await
            .expect("repeat")
            .is_empty(),
        "a repeat changes nothing more"
    );
}

#[tokio::test]
async fn a_failure_after_a_rescue_is_recorded_as_the_handler_said() {
    let client = common::client().await;
    let mut request = job(1, 3);
    // Retried at once, so that the second attempt can start right away.
    request.retry = RetryPolicy {
        initial_ms: 0,
        max_ms: 0,
        multiplier: 1.0,
        jitter: 0.0,
    };
    let id = common::accepted(&client, &request).await;
    let first = claimed_and_rescued(&client, id).await;
    let failed = client
        .worker_store()
        .fail(first, "the handler's own error")
        .await
        .expect("fail")
        .expect("recorded");
    assert_eq!(failed.state, "retryable");
    assert!(failed.late);
    let (state, attempt, error, _) = state_and_attempt(&client, id).await;
    assert_eq!((state.as_str(), attempt), ("retryable", 1));
    assert_eq!(error.as_deref(), Some("the handler's own error"));

    // An ordinary failure, of an attempt that held its job, is not late.
    let second = claim(&client, Duration::from_secs(30)).await;
    assert_eq!(second[0].attempt, 2);
    let failed = client
        .worker_store()
        .fail(second[0], "again")
        .await
        .expect("fail")
        .expect("recorded");
    assert!(!failed.late);
}

#[tokio::test]
async fn a_late_outcome_after_a_later_attempt_started_is_refused_and_that_attempt_decides() {
    let client = common::client().await;
    let id = common::accepted(&client, &job(1, 3)).await;
    let first = claimed_and_rescued(&client, id).await;
    let second = claim(&client, Duration::from_secs(30)).await;
    assert_eq!(second[0].attempt, 2);
    assert!(client
        .worker_store()
        .complete(&[first])
        .await
        .expect("complete")
        .is_empty());
    assert_eq!(
        client
            .worker_store()
            .fail(first, "late")
            .await
            .expect("fail"),
        None
    );
    assert_eq!(state_and_attempt(&client, id).await.0, "running");
    let failed = client
        .worker_store()
        .fail(second[0], "the second attempt's error")
        .await
        .expect("fail")
        .expect("recorded");
    assert_eq!((failed.state.as_str(), failed.late), ("retryable", false));
    // The first attempt's outcome stays refused while the job waits for its third attempt.
    assert!(client
        .worker_store()
        .complete(&[first])
        .await
        .expect("complete")
        .is_empty());
    let (state, attempt, error, _) = state_and_attempt(&client, id).await;
    assert_eq!((state.as_str(), attempt), ("retryable", 2));
    assert_eq!(error.as_deref(), Some("the second attempt's error"));
}

#[tokio::test]
async fn leases_that_passed_while_the_server_was_down_are_rescued_a_lease_after_it_started() {
    let mut server = LocalPostgres::start(&Options {
        durable: false,
        ..Options::default()
    })
    .expect("start");
    let mut config = ClientConfig::new(server.url());
    config.schema = "restarted".into();
    config.migrate = true;
    let client = Client::connect(&config).await.expect("connect");
    for n in 1..=2 {
        common::accepted(&client, &job(n, 1)).await;
    }
    let lease = Duration::from_secs(3);
    let attempts = claim(&client, lease).await;
    assert_eq!(attempts.len(), 2);
    // Both leases pass while the server is down.
    server.shut_down().expect("shut down");
    std::thread::sleep(lease + Duration::from_millis(500));
    server.restart().expect("restart");
    let pool = sqlx::PgPool::connect(&server.url()).await.expect("connect");
    let passed: bool = sqlx::query_scalar(
        "SELECT bool_and(lease_expires_at < now()) FROM restarted.jobs WHERE state = 'running'",
    )
    .fetch_one(&pool)
    .await
    .expect("leases");
    assert!(passed, "both leases passed while the server was down");
    assert!(
        client
            .worker_store()
            .rescue_expired()
            .await
            .expect("rescue")
            .is_empty(),
        "no lease is rescued right after the server started"
    );
    // One worker speaks up; the other's job is rescued once a lease has passed since the start.
    // The kept lease is extended well past that moment: extended by one lease, it would end
    // only as long after the moment as the extension came after the start, which a busy machine
    // can make shorter than the wait for the rescue.
    let kept = client
        .worker_store()
        .extend_leases(&attempts[..1], lease * 4)
        .await
        .expect("extend");
    assert_eq!(kept, attempts[..1]);
    common::eventually("a lease to pass since the server started", || async {
        sqlx::query_scalar::<_, bool>(
            "SELECT now() >= pg_postmaster_start_time() + interval '3 seconds'",
        )
        .fetch_one(&pool)
        .await
        .expect("clock")
    })
    .await;
    let rescued = client
        .worker_store()
        .rescue_expired()
        .await
        .expect("rescue");
    assert_eq!(
        rescued.iter().map(|r| r.id).collect::<Vec<_>>(),
        [attempts[1].job_id]
    );
    pool.close().await;
    drop(client);
    server.stop().expect("stop");
}
