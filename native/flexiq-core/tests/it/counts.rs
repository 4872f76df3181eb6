//! Jobs counted by queue and state: exact for the states that come and go and for the dead
//! letters, completed and cancelled ones over a recent window, each read through a partial
//! index, so that finished jobs are never all read.

use crate::common;

use std::time::Duration;

use flexiq_core::{Attempt, Client, JobCount, JobRequest, Schedule};
use serde_json::Value;
use sqlx::Row;

const FINISHED: i64 = 20_000;

fn job(queue: &str, n: i64) -> JobRequest {
    let mut r = JobRequest::new("count", format!("{{\"n\":{n}}}").into_bytes());
    r.queue = queue.to_string();
    r
}

fn count(queue: &str, state: &str, count: i64) -> JobCount {
    JobCount {
        queue: queue.into(),
        state: state.into(),
        count,
    }
}

async fn sorted_counts(client: &Client) -> Vec<JobCount> {
    let mut counts = client
        .operations()
        .count_jobs(3_600_000)
        .await
        .expect("count");
    counts.sort_by(|a, b| (&a.queue, &a.state).cmp(&(&b.queue, &b.state)));
    counts
}

/// The relations the statement's plan scans sequentially.
async fn seq_scans(client: &Client) -> Vec<String> {
    let pool = sqlx::PgPool::connect(&common::server().url())
        .await
        .expect("connect");
    let sql = include_str!("../../sql/count_jobs.sql")
        .replace("{schema}", client.schema())
        .replace("$1", "3600000::bigint");
    let row = sqlx::query(&format!("EXPLAIN (FORMAT JSON) {sql}"))
        .fetch_one(&pool)
        .await
        .expect("explain");
    let text: String = row.try_get_unchecked(0).expect("the plan's text");
    pool.close().await;
    let plan: Value = serde_json::from_str(&text).expect("a JSON plan");
    let mut out = Vec::new();
    scans(&plan[0]["Plan"], &mut out);
    out
}

fn scans(plan: &Value, out: &mut Vec<String>) {
    if plan["Node Type"] == "Seq Scan" {
        out.push(plan["Relation Name"].as_str().unwrap_or("?").to_string());
    }
    for child in plan["Plans"].as_array().into_iter().flatten() {
        scans(child, out);
    }
}

#[tokio::test]
async fn counts_every_state_by_queue_and_recently_finished_jobs_without_reading_older_ones() {
    let client = common::client().await;
    common::execute(
        &client,
        &format!(
            "INSERT INTO {{schema}}.jobs (queue, task, payload, state, priority, run_at, max_attempts,
                 retry_initial_ms, retry_max_ms, retry_multiplier, retry_jitter, tags, key_held,
                 created_at, finished_at)
             SELECT 'default', 'count', '\\x7b7d', 'completed', 0, now(), 25, 1000, 3600000, 2,
                    0.1, '[]', false, now(), now() - interval '2 hours'
               FROM generate_series(1, {FINISHED})"
        ),
    )
    .await;
    // Never analyzed: what a service has between its first jobs and autovacuum.
    assert_eq!(seq_scans(&client).await, Vec::<String>::new());
    for n in 0..3 {
        client
            .producer()
            .enqueue(&job("default", n))
            .await
            .expect("enqueue");
    }
    for (n, completed) in [(3, false), (4, true)] {
        let id = common::accepted(&client, &job("default", n)).await;
        let finished = if completed {
            client.operations().mark_completed(id).await
        } else {
            client.operations().cancel(id).await
        };
        assert!(finished.expect("finish"));
    }
    let mut later = job("mail", 9);
    later.schedule = Schedule::Delay { millis: 3_600_000 };
    client.producer().enqueue(&later).await.expect("enqueue");
    let mut once = job("mail", 10);
    once.max_attempts = 1;
    client.producer().enqueue(&once).await.expect("enqueue");
    let mail = ["mail".to_string()];
    let claimed = client
        .worker_store()
        .claim(
            &mail,
            &["count".to_string()],
            10,
            Duration::from_secs(30),
            1,
        )
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1);
    let attempt = Attempt {
        job_id: claimed[0].id,
        attempt: 1,
    };
    client
        .worker_store()
        .fail(attempt, "boom")
        .await
        .expect("fail");
    client
        .worker_store()
        .claim(
            &["default".to_string()],
            &["count".to_string()],
            1,
            Duration::from_secs(30),
            2,
        )
        .await
        .expect("claim");

    assert_eq!(
        sorted_counts(&client).await,
        vec![
            count("default", "available", 2),
            count("default", "cancelled", 1),
            count("default", "completed", 1),
            count("default", "running", 1),
            count("mail", "dead", 1),
            count("mail", "scheduled", 1),
        ]
    );
    common::execute(&client, "ANALYZE {schema}.jobs").await;
    assert_eq!(seq_scans(&client).await, Vec::<String>::new());
}
