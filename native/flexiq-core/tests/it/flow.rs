//! Flow control against a real PostgreSQL: debounce, throttle and deadlines.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use flexiq_core::{Client, Error, Flow, JobRequest, NonReplaceable, Outcome, RateTarget, Schedule};

const LEASE: Duration = Duration::from_secs(30);

fn debounced(key: &str, payload: &str, period_ms: i64) -> JobRequest {
    let mut r = JobRequest::new("refresh", payload.as_bytes().to_vec()).with_key(key);
    r.flow.debounce_ms = Some(period_ms);
    r
}

fn throttled(key: &str, payload: &str, window_ms: i64) -> JobRequest {
    let mut r = JobRequest::new("notify", payload.as_bytes().to_vec()).with_key(key);
    r.flow.throttle_ms = Some(window_ms);
    r
}

async fn text_of(client: &Client, sql: &str) -> String {
    common::text(client, sql).await
}

async fn claim(client: &Client, task: &str) -> Vec<i64> {
    client
        .worker_store()
        .claim(&["default".into()], &[task.into()], 100, LEASE, 1)
        .await
        .expect("claim")
        .iter()
        .map(|j| j.id)
        .collect()
}

#[tokio::test]
async fn a_debounce_replaces_its_pending_job_and_pushes_it_back() {
    let client = common::client().await;
    let first = client
        .producer()
        .enqueue(&debounced("k", r#"{"v":1}"#, 60_000))
        .await
        .expect("first");
    assert_eq!(first.outcome, Outcome::Accepted);
    let due_first = common::scalar(
        &client,
        "SELECT (extract(epoch FROM run_at) * 1000000)::bigint FROM {schema}.jobs",
    )
    .await;
    let second = client
        .producer()
        .enqueue(&debounced("k", r#"{"v":2}"#, 60_000))
        .await
        .expect("second");
    assert_eq!(
        (second.job_id, second.outcome),
        (first.job_id, Outcome::Replaced)
    );
    assert_eq!(common::job_count(&client).await, 1);
    assert_eq!(
        text_of(
            &client,
            "SELECT convert_from(payload, 'UTF8') FROM {schema}.jobs"
        )
        .await,
        r#"{"v":2}"#
    );
    let due_second = common::scalar(
        &client,
        "SELECT (extract(epoch FROM run_at) * 1000000)::bigint FROM {schema}.jobs",
    )
    .await;
    assert!(
        due_second > due_first,
        "the due time moves with each request"
    );
    assert_eq!(
        text_of(&client, "SELECT state FROM {schema}.jobs").await,
        "scheduled"
    );
}

#[tokio::test]
async fn max_wait_bounds_the_due_time_and_then_refuses() {
    let client = common::client().await;
    let mut r = debounced("k", "1", 60_000);
    r.flow.max_wait_ms = Some(300);
    let first = client.producer().enqueue(&r).await.expect("first");
    // Due at acceptance + maxWait, not now + period.
    let bounded = common::scalar(
        &client,
        "SELECT (run_at = created_at + interval '300 milliseconds')::int::int8 FROM {schema}.jobs",
    )
    .await;
    assert_eq!(bounded, 1);
    // maxWait passes by the server's clock, as the enqueue below judges it.
    common::until_sql(
        &client,
        &format!(
            "SELECT created_at + interval '300 milliseconds' <= now() FROM {{schema}}.jobs
              WHERE id = {}",
            first.job_id
        ),
    )
    .await;
    r.payload = b"2".to_vec();
    let late = client.producer().enqueue(&r).await.expect("late");
    assert_eq!(
        (late.job_id, late.outcome),
        (
            first.job_id,
            Outcome::NonReplaceable(NonReplaceable::WindowElapsed)
        )
    );
    assert_eq!(
        text_of(
            &client,
            "SELECT convert_from(payload, 'UTF8') FROM {schema}.jobs"
        )
        .await,
        "1",
        "a refused request writes nothing"
    );
}

#[tokio::test]
async fn a_started_job_or_a_key_held_another_way_is_not_replaced() {
    let client = common::client().await;
    let first = client
        .producer()
        .enqueue(&debounced("k", "1", 1))
        .await
        .expect("first");
    // Due once its period has passed by the server's clock, as the claim judges it.
    common::until_sql(
        &client,
        &format!(
            "SELECT run_at <= now() FROM {{schema}}.jobs WHERE id = {}",
            first.job_id
        ),
    )
    .await;
    assert_eq!(claim(&client, "refresh").await, [first.job_id]);
    let running = client
        .producer()
        .enqueue(&debounced("k", "2", 1))
        .await
        .expect("running");
    assert_eq!(
        running.outcome,
        Outcome::NonReplaceable(NonReplaceable::NotPending)
    );

    let plain = JobRequest::new("refresh", b"1".to_vec()).with_key("plain");
    let held = client.producer().enqueue(&plain).await.expect("plain");
    let other = client
        .producer()
        .enqueue(&debounced("plain", "1", 1_000))
        .await
        .expect("other");
    assert_eq!(
        (other.job_id, other.outcome),
        (
            held.job_id,
            Outcome::NonReplaceable(NonReplaceable::IncompatibleMode)
        )
    );
    // The other way round, a plain request meets a debounce's job: a different request.
    match client
        .producer()
        .enqueue(&plain.clone().with_key("k"))
        .await
    {
        Err(Error::Conflict(c)) => assert!(c.fields.contains(&"debounce".to_string()), "{c:?}"),
        other => panic!("expected a conflict, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_debounces_leave_one_job_per_key_with_the_last_replacement() {
    let client = Arc::new(common::client_with_pool(16).await);
    let mut tasks = Vec::new();
    for caller in 0..8 {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            for i in 0..40 {
                let key = format!("k{}", i % 4);
                let payload = format!("{caller}-{i}");
                let r = client
                    .producer()
                    .enqueue(&debounced(&key, &payload, 60_000))
                    .await
                    .expect("enqueue");
                mine.push((key, r));
            }
            mine
        }));
    }
    let mut accepted = 0;
    for t in tasks {
        for (_, r) in t.await.expect("task") {
            match r.outcome {
                Outcome::Accepted => accepted += 1,
                Outcome::Replaced => {}
                other => panic!("unexpected {other:?}"),
            }
        }
    }
    assert_eq!(accepted, 4);
    assert_eq!(common::job_count(&client).await, 4);
}

#[tokio::test]
async fn a_throttle_coalesces_inside_its_window_even_after_the_job_finished() {
    let client = common::client().await;
    let first = client
        .producer()
        .enqueue(&throttled("t", "1", 400))
        .await
        .expect("first");
    assert_eq!(first.outcome, Outcome::Accepted);
    let ids = claim(&client, "notify").await;
    client
        .worker_store()
        .complete(&[flexiq_core::Attempt {
            job_id: ids[0],
            attempt: 1,
        }])
        .await
        .expect("complete");
    let repeat = client
        .producer()
        .enqueue(&throttled("t", "other payload", 400))
        .await
        .expect("repeat");
    assert_eq!(
        (repeat.job_id, repeat.outcome),
        (first.job_id, Outcome::Coalesced)
    );
    // The window closes by the server's clock, as the enqueue below judges it.
    common::until_sql(
        &client,
        &format!(
            "SELECT held_until <= now() FROM {{schema}}.jobs WHERE id = {}",
            first.job_id
        ),
    )
    .await;
    let next = client
        .producer()
        .enqueue(&throttled("t", "1", 400))
        .await
        .expect("next window");
    assert_eq!(next.outcome, Outcome::Accepted);
    assert_ne!(next.job_id, first.job_id);
}

#[tokio::test]
async fn a_throttle_window_closes_even_while_its_job_waits() {
    let client = common::client().await;
    let mut r = throttled("t", "1", 200);
    r.schedule = Schedule::Delay { millis: 60_000 };
    let first = client.producer().enqueue(&r).await.expect("first");
    // The window closes by the server's clock, as the enqueue below judges it.
    common::until_sql(
        &client,
        &format!(
            "SELECT held_until <= now() FROM {{schema}}.jobs WHERE id = {}",
            first.job_id
        ),
    )
    .await;
    let second = client.producer().enqueue(&r).await.expect("second");
    assert_eq!(second.outcome, Outcome::Accepted);
    assert_ne!(second.job_id, first.job_id);
    assert_eq!(common::job_count(&client).await, 2);
}

#[tokio::test]
async fn collapsing_modes_need_a_key_and_one_entry_per_call() {
    let client = common::client().await;
    let mut unkeyed = JobRequest::new("t", b"{}".to_vec());
    unkeyed.flow.throttle_ms = Some(1_000);
    assert!(matches!(
        client.producer().enqueue(&unkeyed).await,
        Err(Error::InvalidArgument(m)) if m.contains("give the job a key")
    ));
    let batch = [throttled("a", "1", 1_000), throttled("b", "1", 1_000)];
    assert!(matches!(
        client.producer().enqueue_many(&batch).await,
        Err(Error::InvalidArgument(m)) if m.contains("one job per call")
    ));
    let mut both = debounced("a", "1", 1_000);
    both.flow.throttle_ms = Some(1_000);
    assert!(client.producer().enqueue(&both).await.is_err());
}

#[tokio::test]
async fn a_job_past_its_deadline_is_never_claimed_and_is_dead_lettered_by_the_rescue() {
    let client = common::client().await;
    let mut late = JobRequest::new("report", b"{}".to_vec()).with_key("late");
    late.flow = Flow {
        deadline_micros: Some(flexiq_core_now_micros() + 100_000),
        ..Flow::default()
    };
    late.schedule = Schedule::Delay { millis: 200 };
    let job = client.producer().enqueue(&late).await.expect("enqueue");
    let on_time = client
        .producer()
        .enqueue(&JobRequest::new("report", b"{}".to_vec()))
        .await
        .expect("on time");
    // Due, so that only its deadline can keep the claim from it, and past that deadline, both
    // by the server's clock, as the claim and the rescue judge them.
    common::until_sql(
        &client,
        &format!(
            "SELECT run_at <= now() AND deadline <= now() FROM {{schema}}.jobs WHERE id = {}",
            job.job_id
        ),
    )
    .await;
    assert_eq!(claim(&client, "report").await, [on_time.job_id]);

    let moved = client
        .worker_store()
        .rescue_expired()
        .await
        .expect("rescue");
    assert_eq!(moved.len(), 1);
    assert!(moved[0].dead && moved[0].late && moved[0].id == job.job_id);
    assert!(
        moved[0].error.starts_with("deadline ") && moved[0].error.contains("passed before"),
        "{}",
        moved[0].error
    );
    let info = client
        .operations()
        .get_job(job.job_id)
        .await
        .expect("get")
        .expect("job");
    assert_eq!(info.state, "dead");
    assert!(!info.key_held, "a dead job's key is released");
    assert!(client
        .worker_store()
        .rescue_expired()
        .await
        .expect("again")
        .is_empty());
}

#[tokio::test]
async fn the_deadline_is_part_of_what_a_replay_is_compared_on() {
    let client = common::client().await;
    let mut a = JobRequest::new("report", b"{}".to_vec()).with_key("k");
    a.flow.deadline_micros = Some(flexiq_core_now_micros() + 60_000_000);
    let first = client.producer().enqueue(&a).await.expect("first");
    assert_eq!(
        client.producer().enqueue(&a).await.expect("replay").job_id,
        first.job_id
    );
    let mut b = a.clone();
    b.flow.deadline_micros = a.flow.deadline_micros.map(|d| d + 1);
    match client.producer().enqueue(&b).await {
        Err(Error::Conflict(c)) => assert_eq!(c.fields, ["deadline"]),
        other => panic!("expected a conflict, got {other:?}"),
    }
}

fn flexiq_core_now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_micros() as i64
}

fn limited(key: &str, limit: i32) -> JobRequest {
    let mut r = JobRequest::new("call_provider", b"{}".to_vec());
    r.flow.concurrency_key = Some(key.into());
    r.flow.concurrency_limit = Some(limit);
    r
}

async fn claim_some(client: &Client, limit: i64) -> Vec<flexiq_core::ClaimedJob> {
    client
        .worker_store()
        .claim(
            &["default".into()],
            &["call_provider".into()],
            limit,
            LEASE,
            1,
        )
        .await
        .expect("claim")
}

#[tokio::test]
async fn a_concurrency_key_caps_its_running_jobs_without_holding_back_the_others() {
    let client = common::client().await;
    let mut keyed = Vec::new();
    for _ in 0..6 {
        keyed.push(common::accepted(&client, &limited("tenant-1", 2)).await);
    }
    let free = common::accepted(&client, &JobRequest::new("call_provider", b"{}".to_vec())).await;
    let first: Vec<i64> = claim_some(&client, 100)
        .await
        .iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(
        first,
        [keyed[0], keyed[1], free],
        "two of the key, and the job behind them"
    );
    assert!(
        claim_some(&client, 100).await.is_empty(),
        "the key is at its limit"
    );
    client
        .worker_store()
        .complete(&[flexiq_core::Attempt {
            job_id: keyed[0],
            attempt: 1,
        }])
        .await
        .expect("complete");
    let next: Vec<i64> = claim_some(&client, 100)
        .await
        .iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(next, [keyed[2]], "one finished, one more starts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_claimers_never_run_more_of_a_key_than_its_limit() {
    let client = Arc::new(common::client_with_pool(16).await);
    for _ in 0..60 {
        client
            .producer()
            .enqueue(&limited("k", 3))
            .await
            .expect("enqueue");
    }
    let mut claimers = Vec::new();
    for _ in 0..12 {
        let client = client.clone();
        claimers.push(tokio::spawn(async move {
            let mut got = 0;
            for _ in 0..20 {
                got += claim_some(&client, 5).await.len();
            }
            got
        }));
    }
    let mut claimed = 0;
    for c in claimers {
        claimed += c.await.expect("claimer");
    }
    assert_eq!(
        claimed, 3,
        "nothing completes, so only the limit ever starts"
    );
    assert_eq!(
        common::scalar(
            &client,
            "SELECT count(*) FROM {schema}.jobs WHERE state = 'running'"
        )
        .await,
        3
    );
}

#[tokio::test]
async fn a_rate_limit_caps_starts_per_period_for_a_queue_and_for_a_key() {
    let client = common::client().await;
    client
        .operations()
        .set_rate_limit(&RateTarget::Queue("default".into()), 3, 400)
        .await
        .expect("set");
    for _ in 0..10 {
        client
            .producer()
            .enqueue(&JobRequest::new("call_provider", b"{}".to_vec()))
            .await
            .expect("enqueue");
    }
    let mut started = Vec::new();
    for _ in 0..4 {
        let got = claim_some(&client, 100).await.len();
        started.push(got);
    }
    assert_eq!(
        started,
        [3, 0, 0, 0],
        "three starts, then the period must pass"
    );
    // The period passes for every start it counts, by the server's clock, as the claim
    // judges it.
    common::until_sql(
        &client,
        "SELECT NOT EXISTS (SELECT FROM {schema}.rate_limits l, unnest(l.recent) t(at)
                             WHERE l.name = 'queue:default'
                               AND t.at > now() - l.period_ms * interval '1 millisecond')",
    )
    .await;
    assert_eq!(claim_some(&client, 100).await.len(), 3);

    // A key's limit holds whatever the queue's allows.
    assert!(client
        .operations()
        .remove_rate_limit(&RateTarget::Queue("default".into()))
        .await
        .expect("remove"));
    client
        .operations()
        .set_rate_limit(&RateTarget::ConcurrencyKey("provider".into()), 2, 60_000)
        .await
        .expect("set key");
    for _ in 0..4 {
        client
            .producer()
            .enqueue(&limited("provider", 100))
            .await
            .expect("keyed");
    }
    let got = claim_some(&client, 100).await;
    // The four jobs left without a key start, and two of the key's.
    assert_eq!(got.len(), 4 + 2);
    assert!(
        !client
            .operations()
            .remove_rate_limit(&RateTarget::Queue("default".into()))
            .await
            .expect("again"),
        "already removed"
    );
}

#[tokio::test]
async fn a_rate_limit_is_refused_outside_its_bounds() {
    let client = common::client().await;
    let queue = RateTarget::Queue("default".into());
    assert!(client
        .operations()
        .set_rate_limit(&queue, 0, 1_000)
        .await
        .is_err());
    assert!(client
        .operations()
        .set_rate_limit(&queue, 1, 0)
        .await
        .is_err());
    assert!(client
        .operations()
        .set_rate_limit(&RateTarget::ConcurrencyKey(String::new()), 1, 1_000)
        .await
        .is_err());
}
