//! Claiming under leases, retries with backoff, dead letters, expired leases and giving
//! attempts back.

use crate::common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use flexiq_core::{Attempt, ClaimedJob, Client, JobRequest, RetryPolicy, Schedule};

const LEASE: Duration = Duration::from_secs(30);

fn job(task: &str, n: i64) -> JobRequest {
    JobRequest::new(task, format!("{{\"n\":{n}}}").into_bytes())
}

async fn claim(client: &Client, tasks: &[&str], limit: i64) -> Vec<ClaimedJob> {
    let tasks: Vec<String> = tasks.iter().map(|t| t.to_string()).collect();
    client
        .worker_store()
        .claim(&["default".to_string()], &tasks, limit, LEASE, 1)
        .await
        .expect("claim")
}

fn attempt(job: &ClaimedJob) -> Attempt {
    Attempt {
        job_id: job.id,
        attempt: job.attempt,
    }
}

fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_micros() as i64
}

#[tokio::test]
async fn claims_due_jobs_of_its_queues_and_tasks_by_priority_then_time() {
    let client = common::client().await;
    let low = common::accepted(&client, &job("a", 1)).await;
    let mut urgent = job("a", 2);
    urgent.priority = 5;
    let urgent = common::accepted(&client, &urgent).await;
    let later = common::accepted(&client, &job("a", 3)).await;
    let mut elsewhere = job("a", 4);
    elsewhere.queue = "other".into();
    client
        .producer()
        .enqueue(&elsewhere)
        .await
        .expect("other queue");
    client
        .producer()
        .enqueue(&job("b", 5))
        .await
        .expect("other task");
    let mut scheduled = job("a", 6);
    scheduled.schedule = Schedule::Delay { millis: 60_000 };
    client
        .producer()
        .enqueue(&scheduled)
        .await
        .expect("scheduled");

    let claimed = claim(&client, &["a"], 10).await;
    let ids: Vec<i64> = claimed.iter().map(|j| j.id).collect();
    assert_eq!(ids, [urgent, low, later]);
    assert!(claimed.iter().all(|j| j.attempt == 1 && j.task == "a"));
    assert!(
        claim(&client, &["a"], 10).await.is_empty(),
        "claimed jobs are running"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_claimers_never_take_the_same_job() {
    let client = Arc::new(common::client_with_pool(8).await);
    let jobs: Vec<JobRequest> = (0..2000).map(|n| job("a", n)).collect();
    client
        .producer()
        .enqueue_many(&jobs)
        .await
        .expect("enqueue");
    let mut claimers = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let client = client.clone();
        claimers.spawn(async move {
            let mut mine = Vec::new();
            loop {
                let batch = claim(&client, &["a"], 25).await;
                if batch.is_empty() {
                    return mine;
                }
                mine.extend(batch.iter().map(|j| j.id));
            }
        });
    }
    let mut seen = HashSet::new();
    let mut total = 0;
    while let Some(mine) = claimers.join_next().await {
        let mine = mine.expect("claimer");
        total += mine.len();
        seen.extend(mine);
    }
    assert_eq!((total, seen.len()), (2000, 2000));
}

#[tokio::test]
async fn failures_back_off_by_the_policy_until_the_attempts_are_spent() {
    let client = common::client().await;
    let mut request = job("flaky", 1).with_key("flaky-1");
    request.max_attempts = 3;
    request.retry = RetryPolicy {
        initial_ms: 10_000,
        max_ms: 15_000,
        multiplier: 2.0,
        jitter: 0.1,
    };
    let id = common::accepted(&client, &request).await;
    let mut expected_delays = [10_000_i64, 15_000].into_iter();
    for n in 1..=3 {
        common::execute(&client, "UPDATE {schema}.jobs SET run_at = now()").await;
        let claimed = claim(&client, &["flaky"], 1).await;
        assert_eq!((claimed[0].id, claimed[0].attempt), (id, n));
        let before = now_micros();
        let failed = client
            .worker_store()
            .fail(attempt(&claimed[0]), &format!("boom {n}"))
            .await
            .expect("fail")
            .expect("attempt held the job");
        let info = client
            .operations()
            .get_job(id)
            .await
            .expect("get")
            .expect("job");
        assert_eq!(
            info.last_error.as_deref(),
            Some(format!("boom {n}").as_str())
        );
        match expected_delays.next() {
            Some(delay_ms) => {
                assert_eq!(failed.state, "retryable");
                let waited_ms = (failed.run_at - before) / 1000;
                let (lo, hi) = (delay_ms * 9 / 10 - 50, delay_ms * 11 / 10 + 50);
                assert!(
                    (lo..=hi).contains(&waited_ms),
                    "attempt {n}: waits {waited_ms} ms"
                );
                assert!(info.key_held, "a job awaiting retry keeps its key");
                assert!(
                    claim(&client, &["flaky"], 1).await.is_empty(),
                    "not due yet"
                );
            }
            None => {
                assert_eq!(failed.state, "dead");
                assert!(!info.key_held, "a dead letter releases its key");
            }
        }
    }
}

#[tokio::test]
async fn an_expired_lease_puts_the_job_back_and_the_next_attempt_finishes_it() {
    let client = common::client().await;
    let id = common::accepted(&client, &job("slow", 1).with_key("slow-1")).await;
    let tasks = ["slow".to_string()];
    let queues = ["default".to_string()];
    let first = client
        .worker_store()
        .claim(&queues, &tasks, 1, Duration::from_millis(50), 1)
        .await
        .expect("claim");
    assert_eq!(
        client
            .worker_store()
            .rescue_expired()
            .await
            .expect("rescue")
            .len(),
        0,
        "lease still live"
    );
    // The lease runs out by the server's clock, as the rescue judges it.
    common::until_sql(
        &client,
        &format!("SELECT lease_expires_at < now() FROM {{schema}}.jobs WHERE id = {id}"),
    )
    .await;
    let rescued = client
        .worker_store()
        .rescue_expired()
        .await
        .expect("rescue");
    assert_eq!(
        rescued,
        vec![flexiq_core::RescuedJob {
            id,
            queue: "default".into(),
            task: first[0].task.clone(),
            attempt: 1,
            max_attempts: first[0].max_attempts,
            dead: false,
            late: false,
            error: "lease expired during attempt 1".into(),
        }]
    );
    let info = client
        .operations()
        .get_job(id)
        .await
        .expect("get")
        .expect("job");
    assert_eq!(info.state, "retryable");
    assert!(
        info.key_held,
        "the key stays held while the job waits again"
    );

    let second = claim(&client, &["slow"], 1).await;
    assert_eq!((second[0].id, second[0].attempt), (id, 2));
    let stale = attempt(&first[0]);
    assert!(client
        .worker_store()
        .extend_leases(&[stale], LEASE)
        .await
        .expect("extend")
        .is_empty());
    assert!(
        client
            .worker_store()
            .complete(&[stale])
            .await
            .expect("complete")
            .is_empty(),
        "a lost attempt cannot complete"
    );
    let kept = client
        .worker_store()
        .extend_leases(&[attempt(&second[0])], LEASE)
        .await
        .expect("extend");
    assert_eq!(kept, [attempt(&second[0])]);
    assert_eq!(
        client
            .worker_store()
            .complete(&kept)
            .await
            .expect("complete"),
        [flexiq_core::Completed {
            attempt: kept[0],
            late: false
        }],
        "the live attempt completes"
    );
    let info = client
        .operations()
        .get_job(id)
        .await
        .expect("get")
        .expect("job");
    assert_eq!((info.state.as_str(), info.attempt), ("completed", 2));
}

#[tokio::test]
async fn an_expired_lease_on_the_last_attempt_dead_letters_the_job() {
    let client = common::client().await;
    let mut request = job("slow", 1).with_key("last-try");
    request.max_attempts = 1;
    let id = common::accepted(&client, &request).await;
    client
        .worker_store()
        .claim(
            &["default".to_string()],
            &["slow".to_string()],
            1,
            Duration::from_millis(10),
            1,
        )
        .await
        .expect("claim");
    // The lease runs out by the server's clock, as the rescue judges it.
    common::until_sql(
        &client,
        &format!("SELECT lease_expires_at < now() FROM {{schema}}.jobs WHERE id = {id}"),
    )
    .await;
    let rescued = client
        .worker_store()
        .rescue_expired()
        .await
        .expect("rescue");
    assert_eq!(rescued.len(), 1);
    assert!(rescued[0].dead, "its last attempt: {rescued:?}");
    let info = client
        .operations()
        .get_job(id)
        .await
        .expect("get")
        .expect("job");
    assert_eq!(info.state, "dead");
    assert!(!info.key_held);
    assert!(info.last_error.is_some_and(|e| e.contains("lease expired")));
}

#[tokio::test]
async fn returned_attempts_are_due_again_and_do_not_count() {
    let client = common::client().await;
    let id = common::accepted(&client, &job("a", 1)).await;
    let claimed = claim(&client, &["a"], 1).await;
    assert_eq!(
        client
            .worker_store()
            .return_attempts(&[attempt(&claimed[0])])
            .await
            .expect("return"),
        [attempt(&claimed[0])]
    );
    let info = client
        .operations()
        .get_job(id)
        .await
        .expect("get")
        .expect("job");
    assert_eq!((info.state.as_str(), info.attempt), ("available", 0));
    assert_eq!(claim(&client, &["a"], 1).await[0].attempt, 1);
}

#[tokio::test]
async fn a_claim_whose_answer_was_lost_is_found_again_by_its_token_until_the_job_moves_on() {
    let client = common::client().await;
    for n in 0..3 {
        client
            .producer()
            .enqueue(&job("lost", n))
            .await
            .expect("enqueue");
    }
    let queues = ["default".to_string()];
    let tasks = ["lost".to_string()];
    let claimed = client
        .worker_store()
        .claim(&queues, &tasks, 2, LEASE, 77)
        .await
        .expect("claim");
    client
        .worker_store()
        .claim(&queues, &tasks, 1, LEASE, 78)
        .await
        .expect("another claim");
    let ids = |jobs: &[ClaimedJob]| jobs.iter().map(|j| j.id).collect::<HashSet<i64>>();
    let recovered = client
        .worker_store()
        .recover_claim(77, LEASE)
        .await
        .expect("recover");
    assert_eq!(
        ids(&recovered),
        ids(&claimed),
        "the claim's own jobs, no other"
    );
    assert!(recovered
        .iter()
        .all(|j| j.attempt == 1 && j.payload.starts_with(b"{")));

    // A job whose attempt finished (or moved on) is no longer the claim's to run.
    client
        .worker_store()
        .complete(&[attempt(&claimed[0])])
        .await
        .expect("complete");
    let rest = client
        .worker_store()
        .recover_claim(77, LEASE)
        .await
        .expect("recover");
    assert_eq!(ids(&rest), HashSet::from([claimed[1].id]));
    assert!(client
        .worker_store()
        .recover_claim(79, LEASE)
        .await
        .expect("recover")
        .is_empty());
}

#[tokio::test]
async fn a_failure_with_a_nul_character_is_recorded() {
    let client = common::client().await;
    let mut request = job("nul", 1);
    request.max_attempts = 1;
    let id = common::accepted(&client, &request).await;
    let claimed = claim(&client, &["nul"], 1).await;
    client
        .worker_store()
        .fail(attempt(&claimed[0]), "bad\0byte")
        .await
        .expect("fail")
        .expect("held");
    let info = client
        .operations()
        .get_job(id)
        .await
        .expect("get")
        .expect("job");
    assert_eq!(info.state, "dead");
    assert_eq!(info.last_error.as_deref(), Some("bad\\0byte"));
}

/// A claim's commit does not wait for its disk flush (claim.sql says why): the statement turns
/// synchronous_commit off for its own transaction, and for nothing after it.
#[tokio::test]
async fn a_claim_commits_without_waiting_for_its_flush_and_leaves_the_session_as_it_was() {
    use sqlx::Connection;

    let client = common::client().await;
    client
        .producer()
        .enqueue(&job("a", 1))
        .await
        .expect("enqueue");
    let mut c = common::durable_session().await;
    let sql = include_str!("../../sql/claim.sql").replace("{schema}", client.schema());
    let mut tx = c.begin().await.expect("begin");
    let claimed = sqlx::query(&sql)
        .bind(vec!["default"])
        .bind(vec!["a"])
        .bind(10_i64)
        .bind(30_000_i64)
        .bind(7_i64)
        .bind(vec![None::<i32>])
        .bind(vec![None::<i64>])
        .bind(vec![None::<i64>])
        .bind("host:1")
        .fetch_all(&mut *tx)
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1);
    let during = common::synchronous_commit(&mut tx).await;
    tx.commit().await.expect("commit");
    let after = common::synchronous_commit(&mut c).await;
    assert_eq!((during.as_str(), after.as_str()), ("off", "on"));
}

async fn claim_next(client: &Client, limit: i64) -> Vec<i64> {
    let claimed = client
        .worker_store()
        .claim_next(
            &["default".to_string()],
            &["a".to_string()],
            limit,
            LEASE,
            1,
        )
        .await
        .expect("claim");
    claimed.iter().map(|j| j.id).collect()
}

async fn enqueue_ids(client: &Client, n: i64) -> Vec<i64> {
    let jobs: Vec<JobRequest> = (0..n).map(|i| job("a", i)).collect();
    let out = client
        .producer()
        .enqueue_many(&jobs)
        .await
        .expect("enqueue");
    out.iter().map(|e| e.job_id).collect()
}

#[tokio::test]
async fn a_worker_reads_on_after_its_last_claim_and_from_the_front_when_that_finds_nothing() {
    let client = common::client().await;
    let ids = enqueue_ids(&client, 3).await;
    assert_eq!(claim_next(&client, 2).await, ids[..2]);
    // Both come due ahead of the job left, behind where the claims got to.
    let mut urgent = job("a", 10);
    urgent.priority = 5;
    let urgent = common::accepted(&client, &urgent).await;
    let mut early = job("a", 11);
    early.schedule = Schedule::At {
        micros: now_micros() - 60_000_000,
    };
    let early = common::accepted(&client, &early).await;

    // A short claim keeps reading on: the job enqueued after it is next, the two behind wait.
    assert_eq!(claim_next(&client, 2).await, ids[2..]);
    let later = enqueue_ids(&client, 1).await;
    assert_eq!(claim_next(&client, 2).await, later);
    // Nothing after the position: the same call reads from the front.
    assert_eq!(claim_next(&client, 2).await, [urgent, early]);
    assert!(claim_next(&client, 2).await.is_empty());
}

#[tokio::test]
async fn a_job_due_behind_a_workers_claims_is_claimed_within_the_interval() {
    let client = common::client().await;
    let ids = enqueue_ids(&client, 200).await;
    assert_eq!(claim_next(&client, 2).await, ids[..2]);
    let mut urgent = job("a", 10);
    urgent.priority = 5;
    let urgent = common::accepted(&client, &urgent).await;
    assert_eq!(claim_next(&client, 2).await, ids[2..4]);
    // A real interval must pass: the client, not the server, times its reads from the front
    // (FROM_FRONT_EVERY, or longer after a slow one). Until then, each claim reads on.
    tokio::time::sleep(flexiq_core::worker_store::positions::FROM_FRONT_EVERY).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut next = 4;
    loop {
        let got = claim_next(&client, 1).await;
        if got == [urgent] {
            break;
        }
        assert_eq!(
            got,
            [ids[next]],
            "a busy worker's claim reads on from its position"
        );
        next += 1;
        assert!(
            tokio::time::Instant::now() < deadline,
            "the job due behind the claims was not claimed within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
