//! Operator queries against a real PostgreSQL: a job found by its key, pages of jobs by queue,
//! state and task, dead letters with their errors, throughput and payloads; and the plans of
//! every one of them, generic and custom, on tables whatever their statistics, none reading
//! the jobs table whole.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use flexiq_core::{keys, Attempt, Client, Error, JobInfo, JobQuery, JobRequest};
use serde_json::Value;
use sqlx::{Connection, Executor, PgConnection, Row};

fn job(task: &str, queue: &str, n: usize) -> JobRequest {
    let mut r = JobRequest::new(task, format!("{{\"n\":{n}}}").into_bytes());
    r.queue = queue.into();
    r
}

fn keyed(key: &str, scope: &str, n: usize) -> JobRequest {
    let mut r = job("mail", "default", n).with_key(key);
    r.scope = scope.into();
    r
}

async fn found(client: &Client, scope: &str, key: &str) -> Option<i64> {
    let job = client
        .operations()
        .find_by_key(scope, key)
        .await
        .expect("find");
    job.map(|j| j.id)
}

#[tokio::test]
async fn find_by_key_names_the_holder_else_the_latest_job_that_held_the_key() {
    let client = common::client().await;
    assert_eq!(found(&client, "default", "order-7").await, None);

    let first = common::accepted(&client, &keyed("order-7", "billing", 1)).await;
    let job = client
        .operations()
        .find_by_key("billing", "order-7")
        .await
        .expect("find")
        .expect("found");
    assert_eq!(job.id, first);
    assert!(job.key_held);
    assert_eq!(job.key_digest, Some(keys::hex(&keys::digest("order-7"))));
    // Scopes keep keys apart.
    assert_eq!(found(&client, "default", "order-7").await, None);

    // Released when it completes: still the job the key names, no longer holding it.
    assert!(client
        .operations()
        .mark_completed(first)
        .await
        .expect("complete"));
    let job = client
        .operations()
        .find_by_key("billing", "order-7")
        .await
        .expect("find")
        .expect("found");
    assert_eq!((job.id, job.key_held), (first, false));

    // A new job takes the key: it is the holder.
    let second = common::accepted(&client, &keyed("order-7", "billing", 2)).await;
    assert_ne!(second, first);
    assert_eq!(found(&client, "billing", "order-7").await, Some(second));
    // Finished too: the latest of the two.
    assert!(client.operations().cancel(second).await.expect("cancel"));
    assert_eq!(found(&client, "billing", "order-7").await, Some(second));

    // A key bound past its job's end (an idempotency key's retention) names its job.
    let mut retained = keyed("capture:inv-7", "billing", 3);
    retained.key_retention_ms = Some(86_400_000);
    let third = common::accepted(&client, &retained).await;
    assert!(client
        .operations()
        .mark_completed(third)
        .await
        .expect("complete"));
    let job = client
        .operations()
        .find_by_key("billing", "capture:inv-7")
        .await
        .expect("find")
        .expect("found");
    assert_eq!((job.id, job.key_held), (third, true));

    // A redriven dead job holds its key again, and is named over later jobs that held it.
    let mut once = keyed("import-9", "default", 4);
    once.max_attempts = 1;
    let dead = common::accepted(&client, &once).await;
    fail_all(&client, "default", "mail", "boom").await;
    assert_eq!(found(&client, "default", "import-9").await, Some(dead));

    for (scope, key) in [("", "k"), ("default", "")] {
        let err = client
            .operations()
            .find_by_key(scope, key)
            .await
            .expect_err("refused");
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    }
}

/// Claims every due job of a queue and task and fails each attempt with `error`.
async fn fail_all(client: &Client, queue: &str, task: &str, error: &str) {
    let claimed = client
        .worker_store()
        .claim(
            &[queue.into()],
            &[task.into()],
            500,
            Duration::from_secs(60),
            1,
        )
        .await
        .expect("claim");
    for c in claimed {
        let attempt = Attempt {
            job_id: c.id,
            attempt: c.attempt,
        };
        client
            .worker_store()
            .fail(attempt, error)
            .await
            .expect("fail");
    }
}

/// Every page of a query, pages of `limit`: the ids, in the order given.
async fn every_page(client: &Client, mut query: JobQuery) -> (Vec<JobInfo>, usize) {
    let mut jobs = Vec::new();
    let mut pages = 0;
    loop {
        let page = client.operations().list_jobs(&query).await.expect("list");
        pages += 1;
        assert!(page.jobs.len() <= query.limit as usize);
        jobs.extend(page.jobs);
        match page.next_cursor {
            Some(c) => query.after = Some(c),
            None => return (jobs, pages),
        }
    }
}

fn query(limit: i32) -> JobQuery {
    JobQuery {
        limit,
        ..JobQuery::default()
    }
}

#[tokio::test]
async fn pages_through_jobs_newest_first_each_once_by_queue_state_and_task() {
    let client = common::client().await;
    // 120 jobs: two queues, three tasks; every fourth completed, every fifth cancelled, the
    // tasks "flaky" of queue "b" dead-lettered.
    let mut all = Vec::new();
    for n in 0..120 {
        let task = ["mail", "resize", "flaky"][n % 3];
        let queue = ["a", "b"][n % 2];
        let mut r = job(task, queue, n);
        r.max_attempts = 1;
        let id = client.producer().enqueue(&r).await.expect("enqueue").job_id;
        if n % 4 == 0 {
            assert!(client
                .operations()
                .mark_completed(id)
                .await
                .expect("complete"));
        } else if n % 5 == 0 {
            assert!(client.operations().cancel(id).await.expect("cancel"));
        }
        all.push(id);
    }
    fail_all(&client, "b", "flaky", "flaky failed: upstream said 503").await;

    let (jobs, pages) = every_page(&client, query(50)).await;
    assert_eq!(pages, 3);
    let ids: Vec<i64> = jobs.iter().map(|j| j.id).collect();
    let mut newest_first = all.clone();
    newest_first.reverse();
    assert_eq!(ids, newest_first, "every job once, newest first");

    // Each filter and combination gives exactly the jobs that match, in order, page by page.
    let states = ["available", "completed", "cancelled", "dead", "running"];
    for queue in [None, Some("a"), Some("b")] {
        for task in [None, Some("mail"), Some("flaky")] {
            for state in [None].into_iter().chain(states.map(Some)) {
                let expected: Vec<i64> = jobs
                    .iter()
                    .filter(|j| queue.is_none_or(|q| j.queue == q))
                    .filter(|j| task.is_none_or(|t| j.task == t))
                    .filter(|j| state.is_none_or(|s| j.state == s))
                    .map(|j| j.id)
                    .collect();
                let q = JobQuery {
                    queue: queue.map(str::to_owned),
                    task: task.map(str::to_owned),
                    state: state.map(str::to_owned),
                    limit: 7,
                    after: None,
                };
                let (listed, pages) = every_page(&client, q.clone()).await;
                let listed: Vec<i64> = listed.iter().map(|j| j.id).collect();
                assert_eq!(listed, expected, "{q:?}");
                assert_eq!(pages, expected.len().div_ceil(7).max(1), "{q:?}");
            }
        }
    }

    // Dead letters carry their last error.
    let q = JobQuery {
        state: Some("dead".into()),
        ..query(500)
    };
    let dead = client.operations().list_jobs(&q).await.expect("list").jobs;
    assert!(!dead.is_empty());
    for j in &dead {
        assert_eq!(
            j.last_error.as_deref(),
            Some("flaky failed: upstream said 503")
        );
        assert_eq!((j.queue.as_str(), j.task.as_str()), ("b", "flaky"));
    }
    let distinct: BTreeSet<i64> = dead.iter().map(|j| j.id).collect();
    assert_eq!(distinct.len(), dead.len());
}

#[tokio::test]
async fn listing_refuses_what_it_cannot_serve() {
    let client = common::client().await;
    let bad = [
        query(0),
        query(501),
        JobQuery {
            state: Some("finished".into()),
            ..query(10)
        },
        JobQuery {
            after: Some("42".into()),
            ..query(10)
        },
        JobQuery {
            queue: Some(String::new()),
            ..query(10)
        },
    ];
    for q in bad {
        let err = client
            .operations()
            .list_jobs(&q)
            .await
            .expect_err("refused");
        assert!(matches!(err, Error::InvalidArgument(_)), "{q:?}: {err}");
    }
}

#[tokio::test]
async fn throughput_counts_jobs_finished_per_minute_and_queue_within_the_window() {
    let client = common::client().await;
    for n in 0..3 {
        let id = common::accepted(&client, &job("mail", "a", n)).await;
        assert!(client
            .operations()
            .mark_completed(id)
            .await
            .expect("complete"));
    }
    let mut once = job("mail", "b", 9);
    once.max_attempts = 1;
    client.producer().enqueue(&once).await.expect("enqueue");
    fail_all(&client, "b", "mail", "boom").await;
    let cancelled = common::accepted(&client, &job("mail", "c", 10)).await;
    assert!(client.operations().cancel(cancelled).await.expect("cancel"));
    // Finished before the window: not counted.
    common::execute(
        &client,
        "UPDATE {schema}.jobs SET finished_at = now() - interval '2 hours'
          WHERE id = (SELECT min(id) FROM {schema}.jobs)",
    )
    .await;

    let rows = client
        .operations()
        .throughput(3_600_000)
        .await
        .expect("throughput");
    let by_queue: Vec<(&str, i64, i64)> = rows
        .iter()
        .map(|t| (t.queue.as_str(), t.completed, t.dead))
        .collect();
    assert_eq!(by_queue, [("a", 2, 0), ("b", 0, 1)], "{rows:?}");
    let now_minute = common::scalar(
        &client,
        "SELECT (extract(epoch FROM date_trunc('minute', now(), 'UTC')) * 1000000)::bigint",
    )
    .await;
    for t in &rows {
        assert_eq!(t.minute % 60_000_000, 0);
        assert!(now_minute - t.minute <= 60_000_000, "{t:?}");
    }
    for bad in [0, 8 * 24 * 3_600_000] {
        assert!(client.operations().throughput(bad).await.is_err());
    }
}

#[tokio::test]
async fn the_payload_is_read_back_as_stored() {
    let client = common::client().await;
    let r = JobRequest::new("mail", b"{\"to\":\"ops@example.com\"}".to_vec());
    let id = client.producer().enqueue(&r).await.expect("enqueue").job_id;
    let stored = client
        .operations()
        .get_payload(id)
        .await
        .expect("payload")
        .expect("found");
    assert_eq!(stored.task, "mail");
    assert_eq!(stored.payload, r.payload);
    assert_eq!(stored.payload_codec, None);
    assert_eq!(
        client
            .operations()
            .get_payload(id + 1)
            .await
            .expect("payload"),
        None
    );
}

// Plans.

/// Jobs in a filled table; keyed, in every state and queue, and some finished hours ago.
const JOBS: i64 = 6_000;

const FILL: &str = "
INSERT INTO {schema}.jobs (queue, task, payload, state, priority, run_at, max_attempts,
                           retry_initial_ms, retry_max_ms, retry_multiplier, retry_jitter, tags,
                           key_scope, key_digest, key_held, created_at, finished_at,
                           lease_expires_at, last_error)
SELECT 'q' || (i % 5), 't' || (i % 7), '\\x7b7d', s.state, 0, now(), 25, 1000, 3600000, 2, 0.1,
       '[]', 'default', sha256(i::text::bytea), s.state NOT IN ('completed', 'cancelled', 'dead'),
       now(),
       CASE WHEN s.state IN ('completed', 'cancelled', 'dead')
            THEN now() - (i % 180) * interval '1 minute' END,
       CASE WHEN s.state = 'running' THEN now() + interval '1 hour' END,
       CASE WHEN s.state = 'dead' THEN 'boom' END
  FROM generate_series(1, $1) i
 CROSS JOIN LATERAL (SELECT CASE WHEN i % 10 < 6 THEN 'completed'
                                 WHEN i % 10 = 6 THEN 'available'
                                 WHEN i % 10 = 7 THEN 'running'
                                 WHEN i % 10 = 8 THEN 'dead'
                                 ELSE 'cancelled' END) s(state)";

/// How the table and its statistics came to be, each on a schema of its own.
#[derive(Debug, Clone, Copy)]
enum Table {
    /// Filled, then analyzed.
    Analyzed,
    /// Filled, never analyzed (autovacuum is off for the table).
    NeverAnalyzed,
    /// Analyzed while empty, then filled.
    AnalyzedEmptyThenFilled,
}

/// A statement to explain: its text, parameter types and values.
struct Explained {
    name: String,
    sql: String,
    types: &'static str,
    args: &'static str,
}

fn job_statement(template: &str) -> String {
    template.replace("{job_columns}", include_str!("../../sql/job_columns.sql"))
}

fn statements() -> Vec<Explained> {
    let mut out = vec![
        Explained {
            name: "find_by_key".into(),
            sql: job_statement(include_str!("../../sql/find_by_key.sql")),
            types: "(text, bytea)",
            args: "('default', sha256('42'))",
        },
        Explained {
            name: "count_jobs".into(),
            sql: include_str!("../../sql/count_jobs.sql").into(),
            types: "(bigint)",
            args: "(3600000)",
        },
        Explained {
            name: "throughput".into(),
            sql: include_str!("../../sql/throughput.sql").into(),
            types: "(bigint)",
            args: "(3600000)",
        },
        Explained {
            name: "list_attempts".into(),
            sql: include_str!("../../sql/list_attempts.sql").into(),
            types: "(bigint)",
            args: "(42)",
        },
        Explained {
            name: "get_payload".into(),
            sql: include_str!("../../sql/get_payload.sql").into(),
            types: "(bigint)",
            args: "(42)",
        },
    ];
    let filters = [
        ("", "none"),
        ("AND j.queue = $3", "queue"),
        ("AND j.task = $4", "task"),
        ("AND j.queue = $3 AND j.task = $4", "queue and task"),
    ];
    let states: [(&str, &'static str); 5] = [
        (
            "every state",
            "(9223372036854775807, ARRAY['available', 'scheduled', 'retryable', \
          'running', 'completed', 'cancelled', 'dead'], 'q1', 't1', 51)",
        ),
        ("available", "(4000, ARRAY['available'], 'q1', 't1', 51)"),
        ("running", "(4000, ARRAY['running'], 'q1', 't1', 51)"),
        ("completed", "(4000, ARRAY['completed'], 'q1', 't1', 51)"),
        ("dead", "(4000, ARRAY['dead'], 'q1', 't1', 51)"),
    ];
    // Bulk actions' statements: (after, state, queue, task, limit, created from, created before
    // [, key, preview]).
    let bulk: [(&str, &str, &'static str, &'static str); 5] = [
        (
            "bulk_count",
            include_str!("../../sql/bulk_count.sql"),
            "(bigint, text, text, text, bigint, bigint, bigint)",
            "(9223372036854775807, 'dead', 'q1', 't1', NULL, NULL, NULL)",
        ),
        (
            "bulk_count",
            include_str!("../../sql/bulk_count.sql"),
            "(bigint, text, text, text, bigint, bigint, bigint)",
            "(9223372036854775807, 'available', 'q1', 't1', NULL, 0, 1800000000000000)",
        ),
        (
            "bulk_cancel",
            include_str!("../../sql/bulk_cancel.sql"),
            "(bigint, text, text, text, bigint, bigint, bigint)",
            "(9223372036854775807, 'available', 'q1', 't1', 1000, NULL, NULL)",
        ),
        (
            "bulk_purge",
            include_str!("../../sql/bulk_purge.sql"),
            "(bigint, text, text, text, bigint, bigint, bigint)",
            "(4000, 'completed', 'q1', 't1', 1000, 0, NULL)",
        ),
        (
            "bulk_redrive",
            include_str!("../../sql/bulk_redrive.sql"),
            "(bigint, text, text, text, bigint, bigint, bigint, text, text)",
            "(9223372036854775807, 'dead', 'q1', 't1', 50, NULL, NULL, 'k', 'bulk:k')",
        ),
    ];
    for (filter, by) in filters {
        for (name, template, types, args) in bulk {
            out.push(Explained {
                name: format!("{name} by {by}, {args}"),
                sql: flexiq_core::operations::bulk::with_bulk_batch(template)
                    .replace("{filters}", filter),
                types,
                args,
            });
        }
        for (state, args) in states {
            out.push(Explained {
                name: format!("list_jobs by {by}, {state}"),
                sql: job_statement(include_str!("../../sql/list_jobs.sql"))
                    .replace("{filters}", filter),
                types: "(bigint, text[], text, text, bigint)",
                args,
            });
        }
    }
    out
}

async fn prepare(client: &Client, table: Table) -> PgConnection {
    let mut c = PgConnection::connect(&common::server().url())
        .await
        .expect("connect");
    let sql = |text: &str| text.replace("{schema}", client.schema());
    c.execute(sql("ALTER TABLE {schema}.jobs SET (autovacuum_enabled = false)").as_str())
        .await
        .expect("autovacuum off");
    let analyze = sql("ANALYZE {schema}.jobs");
    let fill_sql = sql(FILL);
    let fill = sqlx::query(&fill_sql).bind(JOBS);
    match table {
        Table::Analyzed => {
            fill.execute(&mut c).await.expect("fill");
            c.execute(analyze.as_str()).await.expect("analyze");
        }
        Table::NeverAnalyzed => {
            fill.execute(&mut c).await.expect("fill");
        }
        Table::AnalyzedEmptyThenFilled => {
            c.execute(analyze.as_str()).await.expect("analyze");
            fill.execute(&mut c).await.expect("fill");
        }
    }
    c
}

/// The relations a plan reads sequentially.
fn seq_scans(plan: &Value, out: &mut Vec<String>) {
    if plan["Node Type"] == "Seq Scan" {
        out.push(plan["Relation Name"].as_str().unwrap_or("?").to_owned());
    }
    for child in plan["Plans"].as_array().into_iter().flatten() {
        seq_scans(child, out);
    }
}

async fn explain(c: &mut PgConnection, schema: &str, s: &Explained, mode: &str) -> Value {
    c.execute(format!("SET plan_cache_mode = {mode}").as_str())
        .await
        .expect("plan mode");
    let sql = s.sql.replace("{schema}", schema);
    c.execute(format!("PREPARE operator {} AS {sql}", s.types).as_str())
        .await
        .expect(&s.name);
    let row = sqlx::query(&format!(
        "EXPLAIN (FORMAT JSON) EXECUTE operator {}",
        s.args
    ))
    .fetch_one(&mut *c)
    .await
    .expect(&s.name);
    c.execute("DEALLOCATE operator").await.expect("deallocate");
    // A json column, whose binary form is its text (sqlx reads json only with a feature).
    let text: String = row.try_get_unchecked(0).expect("the plan's text");
    let plan: Value = serde_json::from_str(&text).expect("a JSON plan");
    plan[0]["Plan"].clone()
}

async fn no_plan_scans_the_jobs(table: Table) {
    let client = common::client().await;
    let mut c = prepare(&client, table).await;
    let mut scanning = Vec::new();
    let mut explained = 0;
    for s in statements() {
        for mode in ["force_generic_plan", "force_custom_plan"] {
            let plan = explain(&mut c, client.schema(), &s, mode).await;
            explained += 1;
            let mut scans = Vec::new();
            seq_scans(&plan, &mut scans);
            if scans.iter().any(|r| r == "jobs") {
                scanning.push(format!("{} ({mode})", s.name));
            }
        }
    }
    assert_eq!(explained, 2 * (5 + 4 * 5 + 4 * 5));
    assert!(
        scanning.is_empty(),
        "{table:?}: plans that read the jobs table whole:\n{}",
        scanning.join("\n")
    );
}

#[tokio::test]
async fn no_operator_query_scans_the_jobs_analyzed() {
    no_plan_scans_the_jobs(Table::Analyzed).await;
}

#[tokio::test]
async fn no_operator_query_scans_the_jobs_never_analyzed() {
    no_plan_scans_the_jobs(Table::NeverAnalyzed).await;
}

#[tokio::test]
async fn no_operator_query_scans_the_jobs_analyzed_empty_then_filled() {
    no_plan_scans_the_jobs(Table::AnalyzedEmptyThenFilled).await;
}
