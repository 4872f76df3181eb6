//! Attempt history: failed and rescued attempts are kept with their process, times and error;
//! a late failure replaces its rescue's row; the completing attempt is the job's own; the
//! history goes with its job.

use crate::common;

use std::time::Duration;

use flexiq_core::{Attempt, Client, JobRequest};

const LEASE: Duration = Duration::from_secs(60);

async fn claim_one(client: &Client, lease: Duration) -> Attempt {
    let claimed = client
        .worker_store()
        .claim(&["default".into()], &["send".into()], 1, lease, 1)
        .await
        .expect("claim");
    Attempt {
        job_id: claimed[0].id,
        attempt: claimed[0].attempt,
    }
}

fn retried_at_once() -> JobRequest {
    let mut request = JobRequest::new("send", b"{}".to_vec());
    request.retry.initial_ms = 0;
    request.retry.max_ms = 0;
    request
}

#[tokio::test]
async fn each_attempt_is_kept_with_its_process_times_outcome_and_error() {
    let client = common::client().await;
    let id = common::accepted(&client, &retried_at_once()).await;
    let ops = client.operations();
    assert!(ops.attempts(id).await.expect("none yet").is_empty());

    let first = claim_one(&client, LEASE).await;
    let running = ops.attempts(id).await.expect("running");
    assert_eq!(running.len(), 1);
    assert_eq!(running[0].outcome, "running");
    assert_eq!(running[0].finished_at_us, None);
    let process = flexiq_core::host::process_label();
    assert_eq!(running[0].worker.as_deref(), Some(process.as_str()));
    let started = running[0].started_at_us;

    client
        .worker_store()
        .fail(
            first,
            "TimeoutException: the mail server did not answer\n\tat Mailer.send",
        )
        .await
        .expect("fail");
    // The second attempt's lease passes.
    let second = claim_one(&client, Duration::from_millis(1)).await;
    common::until_sql(
        &client,
        "SELECT lease_expires_at < now() FROM {schema}.jobs",
    )
    .await;
    let rescued = client
        .worker_store()
        .rescue_expired()
        .await
        .expect("rescue");
    assert_eq!(rescued.len(), 1);
    // Its failure comes late, and replaces the rescue's row.
    client
        .worker_store()
        .fail(second, "the handler failed after all")
        .await
        .expect("late failure");
    let third = claim_one(&client, LEASE).await;
    client
        .worker_store()
        .complete(&[third])
        .await
        .expect("complete");

    let history = ops.attempts(id).await.expect("history");
    let summary: Vec<(i32, &str)> = history
        .iter()
        .map(|a| (a.attempt, a.outcome.as_str()))
        .collect();
    assert_eq!(summary, [(1, "failed"), (2, "failed"), (3, "completed")]);
    assert_eq!(history[0].started_at_us, started);
    assert!(history[0]
        .error
        .as_deref()
        .unwrap()
        .contains("\tat Mailer.send"));
    assert_eq!(
        history[1].error.as_deref(),
        Some("the handler failed after all")
    );
    assert!(history.iter().all(|a| a.finished_at_us.is_some()));
    assert!(history
        .windows(2)
        .all(|w| w[0].started_at_us < w[1].started_at_us));

    assert!(client.operations().purge(id).await.expect("purge"));
    assert_eq!(
        common::scalar(&client, "SELECT count(*) FROM {schema}.attempts").await,
        0,
        "the history goes with its job"
    );
}

#[tokio::test]
async fn a_rescued_attempt_stays_in_the_history_as_its_lease_expiring() {
    let client = common::client().await;
    let id = common::accepted(&client, &retried_at_once()).await;
    claim_one(&client, Duration::from_millis(1)).await;
    common::until_sql(
        &client,
        "SELECT lease_expires_at < now() FROM {schema}.jobs",
    )
    .await;
    client
        .worker_store()
        .rescue_expired()
        .await
        .expect("rescue");
    let history = client.operations().attempts(id).await.expect("history");
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].outcome, "lease expired");
    assert_eq!(
        history[0].error.as_deref(),
        Some("lease expired during attempt 1")
    );
}
