//! Single enqueues from concurrent callers, sent together, against a real PostgreSQL: the
//! calls share statements, each gets the answer it would have had alone, and a call stuck on a
//! lock holds up nobody else.

use crate::common;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use flexiq_core::{keys, Enqueued, Error, JobRequest, Outcome};
use sqlx::{Connection, Executor};

const TASK: &str = "charge_customer";

fn job(key: Option<&str>, payload: &str) -> JobRequest {
    let request = JobRequest::new(TASK, payload.as_bytes().to_vec());
    match key {
        Some(key) => request.with_key(key),
        None => request,
    }
}

/// What each call of the mixed burst below asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Call {
    Fresh,
    Unkeyed,
    /// The same request as a job enqueued before the burst.
    Replay,
    /// A different request under the key of a job enqueued before the burst.
    Conflict,
    /// The same request as the other calls of its round that share this kind.
    Shared,
}

const KINDS: [Call; 5] = [
    Call::Fresh,
    Call::Unkeyed,
    Call::Replay,
    Call::Conflict,
    Call::Shared,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_calls_share_statements_and_each_gets_its_own_answer() {
    let client = Arc::new(common::client_with_pool(8).await);
    let mut held = HashMap::new();
    for i in 0..8 {
        for key in [format!("same-{i}"), format!("diff-{i}")] {
            let job = client
                .producer()
                .enqueue(&job(Some(&key), "{}"))
                .await
                .expect("held");
            held.insert(key, job.job_id);
        }
    }
    let held = Arc::new(held);
    let before = common::insert_statements(&client).await;

    const TASKS: usize = 32;
    const ROUNDS: usize = 10;
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let (client, held) = (client.clone(), held.clone());
        tasks.push(tokio::spawn(async move {
            let mut answers = Vec::new();
            for round in 0..ROUNDS {
                let kind = KINDS[(t + round) % KINDS.len()];
                // A new job's payload names its call, so that each answer can be checked
                // against the job it names.
                let own = format!("{{\"t\":{t},\"round\":{round}}}");
                let (key, payload) = match kind {
                    Call::Fresh => (Some(format!("fresh-{t}-{round}")), own.as_str()),
                    Call::Unkeyed => (None, own.as_str()),
                    Call::Replay => (Some(format!("same-{}", round % 8)), "{}"),
                    Call::Conflict => (Some(format!("diff-{}", round % 8)), "[1]"),
                    Call::Shared => (Some(format!("shared-{round}")), "{}"),
                };
                let answer = client
                    .producer()
                    .enqueue(&job(key.as_deref(), payload))
                    .await;
                if let (Call::Replay | Call::Conflict, Some(key)) = (kind, &key) {
                    let expected = held[key];
                    match (&answer, kind) {
                        (Ok(Enqueued { job_id, outcome }), Call::Replay) => {
                            assert_eq!((*job_id, *outcome), (expected, Outcome::Replayed))
                        }
                        (Err(Error::Conflict(c)), Call::Conflict) => {
                            assert_eq!((c.index, c.job_id), (0, Some(expected)))
                        }
                        other => panic!("{kind:?} of {key}: {other:?}"),
                    }
                }
                answers.push((kind, key, own, answer));
            }
            answers
        }));
    }
    let mut new_ids = HashMap::new();
    let mut shared: HashMap<String, (HashSet<i64>, usize)> = HashMap::new();
    let mut calls = 0;
    for task in tasks {
        for (kind, key, own, answer) in task.await.expect("task") {
            calls += 1;
            match kind {
                Call::Fresh | Call::Unkeyed => {
                    let job = answer.expect("a new job");
                    assert_eq!(job.outcome, Outcome::Accepted);
                    assert!(
                        new_ids.insert(job.job_id, own).is_none(),
                        "job {} twice",
                        job.job_id
                    );
                }
                Call::Shared => {
                    let job = answer.expect("a shared job");
                    let entry = shared.entry(key.expect("keyed")).or_default();
                    entry.0.insert(job.job_id);
                    entry.1 += usize::from(job.outcome == Outcome::Accepted);
                }
                Call::Replay | Call::Conflict => {}
            }
        }
    }
    for (key, (ids, accepted)) in &shared {
        assert_eq!(
            (ids.len(), *accepted),
            (1, 1),
            "{key}: one job, accepted once"
        );
    }
    let stored: HashMap<i64, String> = sqlx::query_as(&format!(
        "SELECT id, convert_from(payload, 'UTF8') FROM {}.jobs WHERE id = ANY($1)",
        client.schema()
    ))
    .bind(new_ids.keys().copied().collect::<Vec<i64>>())
    .fetch_all(
        &sqlx::PgPool::connect(&common::server().url())
            .await
            .expect("pool"),
    )
    .await
    .expect("payloads")
    .into_iter()
    .collect();
    assert_eq!(
        stored, new_ids,
        "each call's answer names the job it asked for"
    );
    let new_jobs = new_ids.len() + shared.len();
    assert_eq!(
        common::job_count(&client).await,
        (held.len() + new_jobs) as i64
    );

    // Calls that overlapped went out together: far fewer statements than calls, even with
    // each conflicting call sent again alone.
    let statements = common::insert_statements(&client).await - before;
    assert!(
        statements * 2 < calls,
        "{statements} insert statements for {calls} calls"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_call_stuck_on_a_lock_holds_up_no_one_else() {
    let client = Arc::new(common::client_with_pool(8).await);

    // An application's transaction takes the key "blocked" and stays open.
    let mut app = sqlx::PgConnection::connect(&common::server().url())
        .await
        .expect("connect");
    let mut tx = app.begin().await.expect("begin");
    sqlx::query(&format!(
        "SELECT job_id FROM {}.enqueue($1, $2, $3, $4)",
        client.schema()
    ))
    .bind(TASK)
    .bind(&b"{}"[..])
    .bind(keys::digest("blocked"))
    .bind(keys::preview("blocked"))
    .execute(&mut *tx)
    .await
    .expect("enqueue in the open transaction");
    let xid: String = sqlx::query_scalar("SELECT pg_current_xact_id()::text")
        .fetch_one(&mut *tx)
        .await
        .expect("xid");

    // Calls for that key wait for the transaction: enough of them to fill every lane.
    let mut stuck = Vec::new();
    for _ in 0..3 {
        let client = client.clone();
        stuck.push(tokio::spawn(async move {
            client.producer().enqueue(&job(Some("blocked"), "{}")).await
        }));
    }
    let waiting = "SELECT count(*) FROM pg_locks
                    WHERE locktype = 'transactionid' AND NOT granted AND transactionid::text = $1";
    let stats = sqlx::PgPool::connect(&common::server().url())
        .await
        .expect("connect");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let n: i64 = sqlx::query_scalar(waiting)
            .bind(&xid)
            .fetch_one(&stats)
            .await
            .expect("locks");
        if n >= 2 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "calls did not wait");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Every other call still goes through while they wait.
    let others: Vec<_> = (0..20)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                let key = format!("other-{i}");
                client.producer().enqueue(&job(Some(&key), "{}")).await
            })
        })
        .collect();
    for other in others {
        let job = tokio::time::timeout(Duration::from_secs(20), other)
            .await
            .expect("not held up by the stuck calls")
            .expect("task")
            .expect("enqueued");
        assert_eq!(job.outcome, Outcome::Accepted);
    }
    assert!(stuck.iter().all(|s| !s.is_finished()), "still waiting");

    // Once the transaction rolls back, the key is free: one of the stuck calls takes it.
    tx.rollback().await.expect("rollback");
    let mut answers = Vec::new();
    for s in stuck {
        answers.push(s.await.expect("task").expect("enqueued"));
    }
    let ids: HashSet<i64> = answers.iter().map(|a| a.job_id).collect();
    let accepted = answers
        .iter()
        .filter(|a| a.outcome == Outcome::Accepted)
        .count();
    assert_eq!((ids.len(), accepted), (1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replays_in_a_row_are_answered_by_reads_until_a_call_creates_a_job() {
    let client = Arc::new(common::client_with_pool(8).await);
    for i in 0..4 {
        client
            .producer()
            .enqueue(&job(Some(&format!("held-{i}")), "{}"))
            .await
            .expect("held");
    }
    for i in 0..32 {
        let replay = client
            .producer()
            .enqueue(&job(Some(&format!("held-{}", i % 4)), "{}"))
            .await
            .expect("replayed");
        assert_eq!(replay.outcome, Outcome::Replayed);
    }

    // After a streak of replays, each replay is one read: no enqueue statement, shared or not.
    let (reads, sent) = (replay_reads(&client).await, common::enqueues(&client).await);
    let replays = common::burst(&client, 4, 50, |t, c| format!("held-{}", (t + c) % 4)).await;
    assert!(replays.iter().all(|r| r.outcome == Outcome::Replayed));
    assert_eq!(replay_reads(&client).await - reads, 200);
    assert_eq!(common::enqueues(&client).await - sent, 0);

    // A call that is not a replay still gets its own answer: the read finds nothing to replay.
    let conflict = client.producer().enqueue(&job(Some("held-0"), "[1]")).await;
    assert!(matches!(conflict, Err(Error::Conflict(_))), "{conflict:?}");
    let fresh = client
        .producer()
        .enqueue(&job(Some("fresh"), "{}"))
        .await
        .expect("created");
    assert_eq!(fresh.outcome, Outcome::Accepted);

    // Creating a job ended the streak: calls that create jobs are not read first, and four
    // callers at once share statements again.
    let (reads, sent) = (replay_reads(&client).await, common::enqueues(&client).await);
    let created = common::burst(&client, 4, 50, |t, c| format!("new-{t}-{c}")).await;
    assert!(created.iter().all(|r| r.outcome == Outcome::Accepted));
    assert_eq!(replay_reads(&client).await - reads, 0);
    let statements = common::enqueues(&client).await - sent;
    assert!(statements < 200, "{statements} statements for 200 calls");
}

/// Replays answered by a read alone so far.
async fn replay_reads(client: &flexiq_core::Client) -> i64 {
    let scope = flexiq_core::request::sql::expand("{param:scope}");
    common::statements_like(
        client,
        &format!("%FROM {{schema}}.jobs j%j.key_scope = {scope}::text AND%"),
    )
    .await
}

/// The first statement of a shared batch inserts the entries whose key is free and returns
/// them; an entry whose key is held is left out, its job untouched.
#[tokio::test]
async fn the_first_statement_inserts_the_free_keys_and_leaves_a_held_one_out() {
    let client = common::client().await;
    let schema = client.schema();
    let mut c = sqlx::PgConnection::connect(&common::server().url())
        .await
        .expect("connect");
    let sql = flexiq_core::request::sql::expand(include_str!("../../sql/insert_jobs.sql"))
        .replace(
            "{on_conflict}",
            "ON CONFLICT (key_scope, key_digest) WHERE key_held DO NOTHING",
        )
        .replace("{schema}", schema);
    let (types, _) = crate::plans::arrays(&[]);
    c.execute(
        format!(
            "PREPARE first_try ({}, boolean[]) AS {sql}",
            types.join(", ")
        )
        .as_str(),
    )
    .await
    .expect("prepare");
    type Row = (i64, bool, Option<String>, Option<String>, String, Vec<u8>);
    let run = |digests: &[&str]| {
        let (_, args) = crate::plans::arrays(digests);
        format!("EXECUTE first_try ({}, ARRAY[false])", args.join(", "))
    };

    // Keys \x01 and \x02, both free.
    let both: Vec<Row> = sqlx::query_as(&run(&["'\\x01'", "'\\x02'"]))
        .fetch_all(&mut c)
        .await
        .expect("first try");
    assert_eq!(
        both.iter().map(|r| r.5.clone()).collect::<Vec<_>>(),
        [vec![1u8], vec![2u8]]
    );
    assert!(both.iter().all(|r| r.1), "created: {both:?}");
    assert!(
        both[0].0 < both[1].0,
        "ids drawn in the order sent: {both:?}"
    );

    // \x01 is held now, \x03 is free: only \x03 comes back, with an id drawn after both.
    let rows: Vec<Row> = sqlx::query_as(&run(&["'\\x01'", "'\\x03'"]))
        .fetch_all(&mut c)
        .await
        .expect("second try");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].5, vec![3u8]);
    assert!(rows[0].0 > both[1].0, "{rows:?} after {both:?}");
    let holder: i64 = sqlx::query_scalar(&format!(
        "SELECT id FROM {schema}.jobs WHERE key_held AND key_digest = '\\x01'"
    ))
    .fetch_one(&mut c)
    .await
    .expect("holder");
    assert_eq!(holder, both[0].0, "the held key's job is untouched");
    assert_eq!(common::job_count(&client).await, 3);
}

/// Announcements sent by the announcer, after an enqueue's commit, so far.
async fn announcements_after_commit(client: &flexiq_core::Client) -> i64 {
    common::statements_like(client, "%{schema}.announce($1::text[])%").await
}

/// A single enqueue that no other overlaps announces its new job within its own statement:
/// the wake-up goes out with its commit, a round trip before the announcer's would. Calls sent
/// together leave theirs to the announcer, so that their commits never wait for each other.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lone_enqueue_announces_with_its_commit_and_shared_ones_after_it() {
    let client = Arc::new(common::client().await);
    let mut listener = sqlx::postgres::PgListener::connect(&common::server().url())
        .await
        .expect("listener");
    listener
        .listen(&format!("flexiq_{}", client.schema()))
        .await
        .expect("listen");
    let before = announcements_after_commit(&client).await;
    for request in [job(None, "{}"), job(Some("lone"), "{}")] {
        client
            .producer()
            .enqueue(&request)
            .await
            .expect("lone enqueue");
        let woken = tokio::time::timeout(Duration::from_secs(10), listener.recv())
            .await
            .expect("a wake-up")
            .expect("notification");
        assert_eq!(woken.payload(), "default");
    }
    assert_eq!(announcements_after_commit(&client).await - before, 0);

    let sent = common::enqueues(&client).await;
    common::burst(&client, 8, 20, |t, c| format!("together-{t}-{c}")).await;
    let statements = common::enqueues(&client).await - sent;
    assert!(statements < 160, "{statements} statements for 160 calls");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while announcements_after_commit(&client).await == before {
        assert!(
            std::time::Instant::now() < deadline,
            "shared statements are announced after their commit"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
