//! Keyed and unkeyed enqueue against a real PostgreSQL.

use crate::common;

use std::time::Duration;

use flexiq_core::{Error, JobRequest, Outcome, RetryPolicy, Schedule};

fn keyed(key: &str) -> JobRequest {
    JobRequest::new(
        "charge_customer",
        br#"{"amountCents":1000,"customerId":42}"#.to_vec(),
    )
    .with_key(key)
}

#[tokio::test]
async fn a_replay_returns_the_existing_job_and_writes_nothing() {
    let client = common::client().await;
    let first = client
        .producer()
        .enqueue(&keyed("order-1"))
        .await
        .expect("first");
    let second = client
        .producer()
        .enqueue(&keyed("order-1"))
        .await
        .expect("second");
    assert_eq!(first.outcome, Outcome::Accepted);
    assert_eq!(second.outcome, Outcome::Replayed);
    assert_eq!(second.job_id, first.job_id);
    assert_eq!(common::job_count(&client).await, 1);

    // Nor does it draw an id: that writes the sequence, and every few draws WAL that the
    // commit must flush. A replay only reads.
    let ids_drawn = "SELECT last_value FROM {schema}.jobs_id_seq";
    let drawn = common::scalar(&client, ids_drawn).await;
    for _ in 0..50 {
        let replay = client
            .producer()
            .enqueue(&keyed("order-1"))
            .await
            .expect("replay");
        assert_eq!(replay.job_id, first.job_id);
    }
    assert_eq!(common::scalar(&client, ids_drawn).await, drawn);
}

#[tokio::test]
async fn unkeyed_enqueues_always_insert() {
    let client = common::client().await;
    let request = JobRequest::new("send_email", b"{}".to_vec());
    let a = client.producer().enqueue(&request).await.expect("a");
    let b = client.producer().enqueue(&request).await.expect("b");
    assert_ne!(a.job_id, b.job_id);
    assert_eq!(
        (a.outcome, b.outcome),
        (Outcome::Accepted, Outcome::Accepted)
    );
    assert_eq!(common::job_count(&client).await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_enqueues_make_exactly_one_job_per_key() {
    let client = std::sync::Arc::new(common::client_with_pool(16).await);
    let mut tasks = Vec::new();
    for worker in 0..16 {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            for i in 0..100 {
                let key = format!("race-{}", (i + worker * 7) % 100);
                let done = client
                    .producer()
                    .enqueue(&keyed(&key))
                    .await
                    .expect("enqueue");
                seen.push((key, done.job_id));
            }
            seen
        }));
    }
    let mut results = Vec::new();
    for t in tasks {
        results.extend(t.await.expect("task"));
    }
    assert_eq!(common::job_count(&client).await, 100);
    let pool = sqlx::PgPool::connect(&common::server().url())
        .await
        .expect("pool");
    let holders: std::collections::HashMap<Vec<u8>, i64> = sqlx::query_as(&format!(
        "SELECT key_digest, id FROM {}.jobs WHERE key_held",
        client.schema()
    ))
    .fetch_all(&pool)
    .await
    .expect("holders")
    .into_iter()
    .collect();
    assert_eq!(holders.len(), 100);
    for (key, id) in results {
        assert_eq!(
            Some(&id),
            holders.get(&flexiq_core::keys::digest(&key)),
            "{key}"
        );
    }
}

#[tokio::test]
async fn the_same_key_in_two_scopes_makes_two_jobs() {
    let client = common::client().await;
    let mut a = keyed("order-7");
    a.scope = "invoice-capture".into();
    let mut b = keyed("order-7");
    b.scope = "refunds".into();
    let ja = client.producer().enqueue(&a).await.expect("a");
    let jb = client.producer().enqueue(&b).await.expect("b");
    assert_ne!(ja.job_id, jb.job_id);
    assert_eq!(
        client.producer().enqueue(&b).await.expect("b again").job_id,
        jb.job_id
    );
    assert_eq!(common::job_count(&client).await, 2);
}

#[tokio::test]
async fn a_different_request_under_a_bound_key_is_a_conflict_naming_job_and_fields() {
    let client = common::client().await;
    let first = client
        .producer()
        .enqueue(&keyed("order-9"))
        .await
        .expect("first");
    let mut changed = keyed("order-9");
    changed.priority = 5;
    changed.tags = vec!["vip".into()];
    changed.payload = br#"{"amountCents":2000,"customerId":42}"#.to_vec();
    let err = client
        .producer()
        .enqueue(&changed)
        .await
        .expect_err("conflict");
    let Error::Conflict(c) = &err else {
        panic!("expected a conflict, got {err}")
    };
    assert_eq!(c.job_id, Some(first.job_id));
    assert_eq!(c.fields, ["payload", "priority", "tags"]);
    assert!(
        err.to_string()
            .contains(&format!("is bound to job {}", first.job_id)),
        "{err}"
    );
    assert!(
        !err.to_string().contains("order-9"),
        "raw key in message: {err}"
    );
    assert_eq!(common::job_count(&client).await, 1);
}

#[tokio::test]
async fn each_field_of_the_request_alone_makes_a_replay_a_conflict() {
    let client = common::client().await;
    let mut accepted = keyed("every-field");
    accepted.queue = "mail".into();
    accepted.priority = 3;
    accepted.schedule = Schedule::At {
        micros: 4_102_444_800_123_456,
    };
    accepted.max_attempts = 7;
    accepted.retry = RetryPolicy {
        initial_ms: 10,
        max_ms: 100,
        multiplier: 1.5,
        jitter: 0.25,
    };
    accepted.timeout_ms = Some(30_000);
    accepted.tags = vec!["b".into(), "a".into()];
    accepted.key_retention_ms = Some(60_000);
    let first = client
        .producer()
        .enqueue(&accepted)
        .await
        .expect("accepted");
    let replay = client
        .producer()
        .enqueue(&accepted)
        .await
        .expect("same request");
    assert_eq!(
        (replay.job_id, replay.outcome),
        (first.job_id, Outcome::Replayed)
    );

    type Change = fn(&mut JobRequest);
    let changes: [(&str, Change); 11] = [
        ("queue", |r| r.queue = "other".into()),
        ("task", |r| r.task = "other_task".into()),
        ("payload", |r| r.payload = b"[1]".to_vec()),
        ("priority", |r| r.priority = 4),
        ("runAt", |r| {
            r.schedule = Schedule::At {
                micros: 4_102_444_800_123_457,
            }
        }),
        ("maxAttempts", |r| r.max_attempts = 8),
        ("retryPolicy", |r| r.retry.jitter = 0.5),
        ("timeout", |r| r.timeout_ms = None),
        ("tags", |r| r.tags = vec!["a".into()]),
        ("keyRetention", |r| r.key_retention_ms = Some(60_001)),
        ("retryPolicy", |r| r.retry.max_ms = 101),
    ];
    // Sent as usual, then after replays in a row, when a keyed call is first looked up by a
    // read of its own (which must not answer a changed request as a replay).
    for streak in [0, 16] {
        for (field, change) in changes {
            for _ in 0..streak {
                let replay = client
                    .producer()
                    .enqueue(&accepted)
                    .await
                    .expect("same request");
                assert_eq!(replay.outcome, Outcome::Replayed);
            }
            let mut asked = accepted.clone();
            change(&mut asked);
            let Err(Error::Conflict(c)) = client.producer().enqueue(&asked).await else {
                panic!("changing {field} alone is no conflict (after {streak} replays)")
            };
            assert_eq!(c.job_id, Some(first.job_id));
            assert_eq!(c.fields, [field], "changing {field} alone");
        }
    }
    assert_eq!(common::job_count(&client).await, 1);
}

#[tokio::test]
async fn an_omitted_run_at_stays_omitted_and_a_delay_is_fingerprinted_as_requested() {
    let client = common::client().await;
    let immediate = client
        .producer()
        .enqueue(&keyed("imm"))
        .await
        .expect("immediate");
    // Real time must pass, so that a replay that compared the time worked out would differ.
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(
        client
            .producer()
            .enqueue(&keyed("imm"))
            .await
            .expect("replay")
            .outcome,
        Outcome::Replayed
    );
    assert_eq!(common::job_count(&client).await, 1);

    let mut delayed = keyed("later");
    delayed.schedule = Schedule::Delay { millis: 60_000 };
    let d = client.producer().enqueue(&delayed).await.expect("delayed");
    // Real time must pass, so that a replay that compared the due time worked out would differ.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let replay = client
        .producer()
        .enqueue(&delayed)
        .await
        .expect("same delay later");
    assert_eq!(
        (replay.job_id, replay.outcome),
        (d.job_id, Outcome::Replayed)
    );
    let info = client
        .operations()
        .get_job(d.job_id)
        .await
        .expect("get")
        .expect("exists");
    assert_eq!(info.state, "scheduled");

    delayed.schedule = Schedule::Delay { millis: 1_000 };
    let Err(Error::Conflict(c)) = client.producer().enqueue(&delayed).await else {
        panic!("expected conflict")
    };
    assert_eq!(c.fields, ["delay"]);
    let mut explicit = keyed("imm");
    explicit.schedule = Schedule::At { micros: 1_000_000 };
    let Err(Error::Conflict(c)) = client.producer().enqueue(&explicit).await else {
        panic!("expected conflict")
    };
    assert_eq!(
        (c.job_id, c.fields.clone()),
        (Some(immediate.job_id), vec!["runAt".to_string()])
    );
}

#[tokio::test]
async fn bulk_keyed_maps_duplicates_and_collisions_to_existing_jobs_in_input_order() {
    let client = common::client().await;
    let existing = client
        .producer()
        .enqueue(&keyed("k-existing"))
        .await
        .expect("existing");
    let batch = vec![
        keyed("k-a"),
        JobRequest::new("charge_customer", b"{}".to_vec()),
        keyed("k-existing"),
        keyed("k-a"),
        keyed("k-b"),
    ];
    let out = client.producer().enqueue_many(&batch).await.expect("batch");
    let ids: Vec<i64> = out.iter().map(|e| e.job_id).collect();
    let outcomes: Vec<Outcome> = out.iter().map(|e| e.outcome).collect();
    assert_eq!(ids[2], existing.job_id);
    assert_eq!(ids[3], ids[0]);
    assert!(ids[0] != ids[1] && ids[1] != ids[4] && ids[0] != ids[4]);
    use Outcome::*;
    assert_eq!(outcomes, [Accepted, Accepted, Replayed, Replayed, Accepted]);
    assert_eq!(common::job_count(&client).await, 4);
}

#[tokio::test]
async fn bulk_unkeyed_returns_fresh_ids_in_input_order() {
    let client = common::client().await;
    let batch: Vec<JobRequest> = (0..50)
        .map(|i| JobRequest::new("t", format!("{{\"i\":{i}}}").into_bytes()))
        .collect();
    let out = client.producer().enqueue_many(&batch).await.expect("batch");
    for (i, e) in out.iter().enumerate() {
        let payload: Vec<u8> = sqlx::query_scalar(&format!(
            "SELECT payload FROM {}.jobs WHERE id = $1",
            client.schema()
        ))
        .bind(e.job_id)
        .fetch_one(
            &sqlx::PgPool::connect(&common::server().url())
                .await
                .expect("pool"),
        )
        .await
        .expect("payload");
        assert_eq!(payload, format!("{{\"i\":{i}}}").into_bytes());
    }
}

#[tokio::test]
async fn a_conflict_anywhere_fails_the_whole_batch_and_leaves_no_key_held() {
    let client = common::client().await;
    client
        .producer()
        .enqueue(&keyed("held"))
        .await
        .expect("held");
    let mut changed = keyed("held");
    changed.max_attempts = 3;
    let batch = vec![keyed("fresh-1"), keyed("fresh-2"), changed];
    let Err(Error::Conflict(c)) = client.producer().enqueue_many(&batch).await else {
        panic!("expected conflict")
    };
    assert_eq!(
        (c.index, c.fields.clone()),
        (2, vec!["maxAttempts".to_string()])
    );
    assert_eq!(common::job_count(&client).await, 1);
    assert_eq!(
        common::scalar(&client, "SELECT count(*) FROM {schema}.jobs WHERE key_held").await,
        1
    );
    // The rolled-back batch holds nothing: its keys are free.
    assert_eq!(
        client
            .producer()
            .enqueue(&keyed("fresh-1"))
            .await
            .expect("fresh")
            .outcome,
        Outcome::Accepted
    );

    let mut twin = keyed("twin");
    twin.priority = 1;
    let Err(Error::Conflict(c)) = client.producer().enqueue_many(&[keyed("twin"), twin]).await
    else {
        panic!("expected conflict inside the batch")
    };
    assert_eq!((c.index, c.batch_index, c.job_id), (1, Some(0), None));
    assert_eq!(
        client
            .producer()
            .enqueue(&keyed("twin"))
            .await
            .expect("twin")
            .outcome,
        Outcome::Accepted
    );
}

#[tokio::test]
async fn each_bulk_call_is_one_statement() {
    let client = common::client_with_pool(1).await;
    client
        .producer()
        .enqueue(&keyed("warm"))
        .await
        .expect("warm the connection");
    let stats = sqlx::PgPool::connect(&common::server().url())
        .await
        .expect("pool");
    sqlx::query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        .execute(&stats)
        .await
        .expect("ext");
    for keyed_batch in [false, true] {
        sqlx::query("SELECT pg_stat_statements_reset()")
            .execute(&stats)
            .await
            .expect("reset");
        let batch: Vec<JobRequest> = (0..200)
            .map(|i| {
                let r = JobRequest::new("t", format!("[{}]", i % 150).into_bytes());
                if keyed_batch {
                    r.with_key(format!("bulk-{}", i % 150))
                } else {
                    r
                }
            })
            .collect();
        client.producer().enqueue_many(&batch).await.expect("batch");
        // After the commit, the new jobs' queue is announced once, in the background.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let (calls, announcements) = loop {
            let (calls, announcements): (i64, i64) = sqlx::query_as(
                "SELECT coalesce(sum(calls) FILTER (WHERE NOT announcement), 0)::bigint,
                        coalesce(sum(calls) FILTER (WHERE announcement), 0)::bigint
                   FROM (SELECT calls, query LIKE '%.announce($1::text[])%' AS announcement
                           FROM pg_stat_statements
                          WHERE dbid = (SELECT oid FROM pg_database
                                         WHERE datname = current_database())
                            AND query LIKE '%' || $1 || '.%') s",
            )
            .bind(client.schema())
            .fetch_one(&stats)
            .await
            .expect("stats");
            if announcements > 0 || std::time::Instant::now() > deadline {
                break (calls, announcements);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        // Tests run side by side on one server: only statements naming this test's schema count.
        assert_eq!(calls, 1, "keyed batch: {keyed_batch}");
        assert_eq!(announcements, 1, "keyed batch: {keyed_batch}");
    }
}

/// A notification takes a transaction id, so the announcement's commit writes a record; it
/// does not wait for that record's flush (announce_queues.sql says why), and leaves the session as it
/// was, so that the enqueues that follow on the connection still commit durably.
#[tokio::test]
async fn an_announcement_commits_without_waiting_for_its_flush_and_leaves_the_session_as_it_was() {
    use sqlx::Connection;

    let client = common::client().await;
    let mut c = common::durable_session().await;
    let sql = include_str!("../../sql/announce_queues.sql").replace("{schema}", client.schema());
    let mut tx = c.begin().await.expect("begin");
    let announced: i32 = sqlx::query_scalar(&sql)
        .bind(vec!["default"])
        .fetch_one(&mut *tx)
        .await
        .expect("announce");
    assert_eq!(announced, 1);
    let during = common::synchronous_commit(&mut tx).await;
    tx.commit().await.expect("commit");
    let after = common::synchronous_commit(&mut c).await;
    assert_eq!((during.as_str(), after.as_str()), ("off", "on"));
}

#[tokio::test]
async fn bad_input_is_refused_before_anything_is_written() {
    let client = common::client().await;
    let cases: Vec<(JobRequest, &str)> = vec![
        (keyed(""), "key must not be empty"),
        (
            keyed(&"k".repeat(513)),
            "key is 513 bytes of UTF-8; the limit is 512",
        ),
        (
            JobRequest::new("a\0b", b"{}".to_vec()),
            "task name must not contain a NUL character (found at byte 1)",
        ),
        (
            JobRequest::new("", b"{}".to_vec()),
            "task name must not be empty",
        ),
    ];
    for (request, message) in cases {
        let err = client
            .producer()
            .enqueue(&request)
            .await
            .expect_err(message);
        assert_eq!(err.to_string(), message);
    }
    assert_eq!(common::job_count(&client).await, 0);
}

#[tokio::test]
async fn a_role_or_database_the_server_lacks_is_named_with_what_to_check() {
    let port = common::server().port();
    let cases = [
        (
            format!("postgres://no_such_role@127.0.0.1:{port}/postgres"),
            "role \"no_such_role\" does not exist; check the user and password in the URL",
        ),
        (
            format!("postgres://postgres@127.0.0.1:{port}/no_such_db"),
            "database \"no_such_db\" does not exist; check the database named in the URL",
        ),
    ];
    for (url, expected) in cases {
        let err = flexiq_core::Client::connect(&flexiq_core::ClientConfig::new(url.as_str()))
            .await
            .err()
            .expect("refused");
        match err {
            Error::Storage(m) => assert!(
                m.contains(expected) && m.contains(&format!("connecting to 127.0.0.1:{port}")),
                "{m}"
            ),
            other => panic!("expected a storage error for {url}, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn an_unreachable_server_fails_within_the_connect_timeout() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let mut config =
        flexiq_core::ClientConfig::new(format!("postgres://postgres@127.0.0.1:{port}/postgres"));
    config.connect_timeout = Duration::from_millis(500);
    let started = std::time::Instant::now();
    let err = flexiq_core::Client::connect(&config)
        .await
        .err()
        .expect("unreachable");
    assert!(matches!(err, Error::Unavailable(_)), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
}
