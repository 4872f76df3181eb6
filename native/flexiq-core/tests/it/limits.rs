//! The edges of what a job may hold: due times to the microsecond from the year 1 to 9999,
//! durations up to 36500 days, retries that grow without bound, schema names that leave room
//! for their wake-up channel.

use crate::common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use flexiq_core::validate::{MAX_RUN_AT_MICROS, MAX_STORED_DURATION_MS, MIN_RUN_AT_MICROS};
use flexiq_core::{
    Attempt, Client, ClientConfig, Error, JobRequest, Outcome, RetryPolicy, Schedule,
};

fn at(key: &str, micros: i64) -> JobRequest {
    let mut request = JobRequest::new("remind", b"{}".to_vec()).with_key(key);
    request.schedule = Schedule::At { micros };
    request
}

fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_micros() as i64
}

#[tokio::test]
async fn due_times_are_stored_to_the_microsecond_from_the_year_1_to_9999() {
    let client = common::client().await;
    let times = [
        MIN_RUN_AT_MICROS,
        MIN_RUN_AT_MICROS + 1,
        -1,
        // Past 2^53 microseconds (the year 2255) float8 arithmetic loses microseconds.
        9_007_199_254_740_993,
        MAX_RUN_AT_MICROS - 1,
        MAX_RUN_AT_MICROS,
    ];
    for (n, micros) in times.into_iter().enumerate() {
        let job = client
            .producer()
            .enqueue(&at(&format!("t{n}"), micros))
            .await
            .expect("enqueue");
        let info = client
            .operations()
            .get_job(job.job_id)
            .await
            .expect("get")
            .expect("job");
        assert_eq!(info.run_at, micros, "runAt of job {n}");
        let replay = client
            .producer()
            .enqueue(&at(&format!("t{n}"), micros))
            .await
            .expect("replay");
        assert_eq!(replay.outcome, Outcome::Replayed);
    }
    // One microsecond apart is another request, even in the year 9999.
    let err = client
        .producer()
        .enqueue(&at("t5", MAX_RUN_AT_MICROS - 1))
        .await
        .expect_err("conflict");
    assert!(
        matches!(&err, Error::Conflict(c) if c.fields == ["runAt"]),
        "{err}"
    );
}

#[tokio::test]
async fn out_of_range_times_and_durations_are_refused_before_anything_is_written() {
    let client = common::client().await;
    let mut cases = Vec::new();
    for micros in [MIN_RUN_AT_MICROS - 1, MAX_RUN_AT_MICROS + 1, i64::MAX] {
        cases.push(at("k", micros));
    }
    let mut delayed = JobRequest::new("remind", b"{}".to_vec());
    delayed.schedule = Schedule::Delay {
        millis: MAX_STORED_DURATION_MS + 1,
    };
    cases.push(delayed);
    let mut retained = JobRequest::new("remind", b"{}".to_vec()).with_key("k");
    retained.key_retention_ms = Some(i64::MAX);
    cases.push(retained);
    let mut timed = JobRequest::new("remind", b"{}".to_vec());
    timed.timeout_ms = Some(MAX_STORED_DURATION_MS + 1);
    cases.push(timed);
    let mut retried = JobRequest::new("remind", b"{}".to_vec());
    retried.retry.max_ms = i64::MAX;
    cases.push(retried);
    for request in cases {
        let err = client
            .producer()
            .enqueue(&request)
            .await
            .expect_err("refused");
        assert!(
            matches!(&err, Error::InvalidArgument(m) if m.contains("must be between")),
            "{request:?}: {err}"
        );
    }
    assert_eq!(common::job_count(&client).await, 0);
}

#[tokio::test]
async fn the_longest_delay_and_retention_land_exactly() {
    let client = common::client().await;
    let mut request = JobRequest::new("remind", b"{}".to_vec()).with_key("far");
    request.schedule = Schedule::Delay {
        millis: MAX_STORED_DURATION_MS,
    };
    request.key_retention_ms = Some(MAX_STORED_DURATION_MS);
    let id = common::accepted(&client, &request).await;
    let exact = |column: &str| {
        format!(
            "SELECT ((extract(epoch FROM {column} - created_at) * 1000)::bigint \
                     = {MAX_STORED_DURATION_MS})::int::int8 FROM {{schema}}.jobs WHERE id = {id}"
        )
    };
    assert_eq!(common::scalar(&client, &exact("run_at")).await, 1);
    assert_eq!(common::scalar(&client, &exact("retain_until")).await, 1);
}

/// Claims the job as its attempt `attempt` (earlier attempts are written into the row) and
/// fails it; returns how long the retry waits, in milliseconds.
async fn retry_wait_after(client: &Client, id: i64, attempt: i32) -> i64 {
    common::execute(
        client,
        &format!(
            "UPDATE {{schema}}.jobs SET attempt = {}, run_at = now() WHERE id = {id}",
            attempt - 1
        ),
    )
    .await;
    let claimed = client
        .worker_store()
        .claim(
            &["default".to_string()],
            &["flaky".to_string()],
            1,
            Duration::from_secs(30),
            1,
        )
        .await
        .expect("claim");
    assert_eq!((claimed[0].id, claimed[0].attempt), (id, attempt));
    let before = now_micros();
    let failed = client
        .worker_store()
        .fail(
            Attempt {
                job_id: id,
                attempt,
            },
            "boom",
        )
        .await
        .expect("the failure is recorded")
        .expect("attempt held the job");
    assert_eq!(failed.state, "retryable");
    (failed.run_at - before) / 1000
}

async fn flaky(client: &Client, retry: RetryPolicy) -> i64 {
    let mut request = JobRequest::new("flaky", b"{}".to_vec());
    request.max_attempts = i32::MAX;
    request.retry = retry;
    common::accepted(client, &request).await
}

#[tokio::test]
async fn retries_after_many_attempts_wait_the_maximum_instead_of_overflowing() {
    let client = common::client().await;
    let day_ms = 86_400_000;
    let doubling = flaky(
        &client,
        RetryPolicy {
            initial_ms: 1_000,
            max_ms: day_ms,
            multiplier: 2.0,
            jitter: 0.0,
        },
    )
    .await;
    // 2^1999 is no double: computing it would fail the statement and leave the job running.
    let waited = retry_wait_after(&client, doubling, 2_000).await;
    assert!(
        (day_ms..day_ms + 1_000).contains(&waited),
        "waits {waited} ms"
    );
    let waited = retry_wait_after(&client, doubling, 2).await;
    assert!((2_000..3_000).contains(&waited), "waits {waited} ms");

    let steep = flaky(
        &client,
        RetryPolicy {
            initial_ms: MAX_STORED_DURATION_MS,
            max_ms: MAX_STORED_DURATION_MS,
            multiplier: f64::MAX,
            jitter: 1.0,
        },
    )
    .await;
    let waited = retry_wait_after(&client, steep, 3).await;
    assert!(
        (0..=2 * MAX_STORED_DURATION_MS).contains(&waited),
        "waits {waited} ms"
    );

    let immediate = flaky(
        &client,
        RetryPolicy {
            initial_ms: 0,
            max_ms: day_ms,
            multiplier: 3.0,
            jitter: 0.5,
        },
    )
    .await;
    let waited = retry_wait_after(&client, immediate, 1_000_000).await;
    assert!(waited < 1_000, "waits {waited} ms");
}

#[tokio::test]
async fn the_longest_schema_name_leaves_room_for_its_wake_up_channel() {
    let prefix = format!("l{}_", std::process::id());
    let mut config = ClientConfig::new(common::server().url());
    config.migrate = true;
    config.schema = format!("{prefix}{}", "x".repeat(56 - prefix.len()));
    let client = Client::connect(&config).await.expect("56 characters");
    let job = client
        .producer()
        .enqueue(&JobRequest::new("remind", b"{}".to_vec()))
        .await
        .expect("an enqueue announces on the schema's channel");
    assert_eq!(job.outcome, Outcome::Accepted);

    config.schema.push('x');
    let err = Client::connect(&config).await.err().expect("57 characters");
    assert!(
        err.to_string().contains("must be 1 to 56 characters"),
        "{err}"
    );
}
