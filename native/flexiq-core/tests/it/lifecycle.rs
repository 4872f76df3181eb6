//! Key release when a job leaves the active states, retention windows and their expiry.

use crate::common;

use std::time::Duration;

use flexiq_core::{Attempt, Client, Error, JobRequest, Outcome};

/// A keyed job with a single attempt, so that one failure dead-letters it.
fn keyed(key: &str) -> JobRequest {
    let mut request = JobRequest::new("sync_account", br#"{"account":7}"#.to_vec()).with_key(key);
    request.max_attempts = 1;
    request
}

async fn claim_one(client: &Client) -> Attempt {
    let claimed = client
        .worker_store()
        .claim(
            &["default".to_string()],
            &["sync_account".to_string()],
            1,
            Duration::from_secs(30),
            1,
        )
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1);
    Attempt {
        job_id: claimed[0].id,
        attempt: claimed[0].attempt,
    }
}

/// Runs `exit` on a fresh keyed job, then checks that the key makes a new job.
async fn key_is_released_by(exit: &str) {
    let client = common::client().await;
    let first = client
        .producer()
        .enqueue(&keyed("k"))
        .await
        .expect("enqueue");
    assert_eq!(
        common::accepted(&client, &keyed("k")).await,
        first.job_id,
        "held while pending"
    );
    let moved = match exit {
        "complete" => {
            let attempt = claim_one(&client).await;
            assert_eq!(
                common::accepted(&client, &keyed("k")).await,
                first.job_id,
                "held while running"
            );
            client
                .worker_store()
                .complete(&[attempt])
                .await
                .expect("complete")
                .len()
                == 1
        }
        "dead-letter" => {
            let attempt = claim_one(&client).await;
            let failed = client
                .worker_store()
                .fail(attempt, "gave up")
                .await
                .expect("fail");
            failed.is_some_and(|f| f.state == "dead")
        }
        "cancel" => client
            .operations()
            .cancel(first.job_id)
            .await
            .expect("cancel"),
        "purge" => client
            .operations()
            .purge(first.job_id)
            .await
            .expect("purge"),
        other => panic!("unknown exit {other}"),
    };
    assert!(moved, "{exit} found the job");
    let again = client
        .producer()
        .enqueue(&keyed("k"))
        .await
        .expect("enqueue again");
    assert_eq!(again.outcome, Outcome::Accepted, "{exit}");
    assert_ne!(again.job_id, first.job_id, "{exit}");
}

#[tokio::test]
async fn completing_releases_the_key() {
    key_is_released_by("complete").await;
}

#[tokio::test]
async fn dead_lettering_releases_the_key() {
    key_is_released_by("dead-letter").await;
}

#[tokio::test]
async fn cancelling_releases_the_key() {
    key_is_released_by("cancel").await;
}

#[tokio::test]
async fn purging_releases_the_key() {
    key_is_released_by("purge").await;
}

#[tokio::test]
async fn get_job_shows_state_and_key_digest_but_not_the_key() {
    let client = common::client().await;
    let job = client
        .producer()
        .enqueue(&keyed("customer-000123"))
        .await
        .expect("enqueue");
    let info = client
        .operations()
        .get_job(job.job_id)
        .await
        .expect("get")
        .expect("exists");
    assert_eq!(
        (info.state.as_str(), info.attempt, info.task.as_str()),
        ("available", 0, "sync_account")
    );
    assert_eq!(info.key_preview.as_deref(), Some("custo…"));
    assert_eq!(
        info.key_digest.as_deref(),
        Some(flexiq_core::keys::hex(&flexiq_core::keys::digest("customer-000123")).as_str())
    );
    assert!(info.key_held);
    assert!(client
        .operations()
        .get_job(job.job_id + 1000)
        .await
        .expect("get")
        .is_none());
}

#[tokio::test]
async fn a_retention_window_keeps_the_key_after_completion() {
    let client = common::client().await;
    let mut request = keyed("webhook-delivery-1");
    request.key_retention_ms = Some(3_600_000);
    let first = client.producer().enqueue(&request).await.expect("enqueue");
    let attempt = claim_one(&client).await;
    assert_eq!(
        client
            .worker_store()
            .complete(&[attempt])
            .await
            .expect("complete")
            .len(),
        1
    );
    let replay = client
        .producer()
        .enqueue(&request)
        .await
        .expect("redelivery");
    assert_eq!(
        (replay.job_id, replay.outcome),
        (first.job_id, Outcome::Replayed)
    );
    assert_eq!(
        client
            .operations()
            .expire_keys()
            .await
            .expect("maintenance"),
        0,
        "window still open"
    );
}

#[tokio::test]
async fn purging_a_pending_job_releases_its_key_whatever_the_retention() {
    let client = common::client().await;
    let mut request = keyed("retained");
    request.key_retention_ms = Some(3_600_000);
    let first = client.producer().enqueue(&request).await.expect("enqueue");
    assert!(client
        .operations()
        .purge(first.job_id)
        .await
        .expect("purge"));
    let again = client.producer().enqueue(&request).await.expect("again");
    assert_eq!(again.outcome, Outcome::Accepted);
}

#[tokio::test]
async fn an_expired_key_owns_a_new_job_and_maintenance_releases_expired_keys() {
    let client = common::client().await;
    let mut request = keyed("short");
    request.key_retention_ms = Some(200);
    let first = client.producer().enqueue(&request).await.expect("enqueue");
    let mut other = keyed("short-2");
    other.key_retention_ms = Some(200);
    let second = client.producer().enqueue(&other).await.expect("enqueue");
    assert!(client
        .operations()
        .mark_completed(first.job_id)
        .await
        .expect("complete"));
    assert!(client
        .operations()
        .mark_completed(second.job_id)
        .await
        .expect("complete"));
    // Both windows close by the server's clock, as the enqueue and maintenance below judge it.
    common::until_sql(
        &client,
        &format!(
            "SELECT bool_and(held_until <= now()) FROM {{schema}}.jobs
              WHERE id IN ({}, {})",
            first.job_id, second.job_id
        ),
    )
    .await;

    // Without maintenance: the expired key is taken over by the new job.
    let again = client
        .producer()
        .enqueue(&request)
        .await
        .expect("after expiry");
    assert_eq!(again.outcome, Outcome::Accepted);
    assert_ne!(again.job_id, first.job_id);
    // Maintenance releases the other expired key and leaves the live one.
    assert_eq!(
        client
            .operations()
            .expire_keys()
            .await
            .expect("maintenance"),
        1
    );
    assert_eq!(
        client
            .producer()
            .enqueue(&other)
            .await
            .expect("after maintenance")
            .outcome,
        Outcome::Accepted
    );
    assert_eq!(common::accepted(&client, &request).await, again.job_id);
}

#[tokio::test]
async fn a_running_job_cannot_be_cancelled_or_purged() {
    let client = common::client().await;
    let job = client
        .producer()
        .enqueue(&keyed("busy"))
        .await
        .expect("enqueue");
    claim_one(&client).await;
    assert!(!client
        .operations()
        .cancel(job.job_id)
        .await
        .expect("cancel"));
    assert!(!client.operations().purge(job.job_id).await.expect("purge"));
    assert_eq!(common::accepted(&client, &keyed("busy")).await, job.job_id);
}

#[tokio::test]
async fn dropping_the_schema_removes_it_and_a_repeat_finds_nothing_to_do() {
    let client = common::client().await;
    client
        .producer()
        .enqueue(&keyed("drop-me"))
        .await
        .expect("enqueue");
    let present = format!(
        "SELECT count(*) FROM pg_namespace WHERE nspname = '{}'",
        client.schema()
    );
    assert_eq!(common::scalar(&client, &present).await, 1);
    client.drop_schema().await.expect("drop");
    assert_eq!(common::scalar(&client, &present).await, 0);
    client
        .drop_schema()
        .await
        .expect("a repeat changes nothing");
}

#[tokio::test]
async fn a_schema_never_migrated_is_named_as_the_cause() {
    let client = common::client_with(|config| config.migrate = false).await;
    match client.producer().enqueue(&keyed("too-early")).await {
        Err(Error::Storage(m)) => assert!(
            m.contains("does not exist")
                && m.contains("is the schema migrated? Build one client with migrate(true)"),
            "{m}"
        ),
        other => panic!("expected a storage error naming the migration, got {other:?}"),
    }
}
