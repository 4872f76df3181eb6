//! Paused queues: their jobs wait unclaimed while enqueues go on; a pause returns only once no
//! claim can start its jobs, and a claim under way when it commits sees it; a resume announces
//! the queue; the SQL functions that other languages call refuse what they cannot keep.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use flexiq_core::{Client, JobRequest, Outcome};
use sqlx::{Connection, PgConnection};

const LEASE: Duration = Duration::from_secs(60);

fn job(queue: &str) -> JobRequest {
    let mut request = JobRequest::new("send", b"{}".to_vec());
    request.queue = queue.into();
    request
}

async fn claim(client: &Client, queues: &[&str]) -> Vec<String> {
    let queues: Vec<String> = queues.iter().map(|q| q.to_string()).collect();
    client
        .worker_store()
        .claim(&queues, &["send".into()], 100, LEASE, 1)
        .await
        .expect("claim")
        .into_iter()
        .map(|j| j.queue)
        .collect()
}

async fn session() -> PgConnection {
    PgConnection::connect(&common::server().url())
        .await
        .expect("connect")
}

#[tokio::test]
async fn a_paused_queue_keeps_its_jobs_unclaimed_and_enqueues_go_on_until_it_is_resumed() {
    let client = common::client().await;
    let ops = client.operations();
    for queue in ["mail", "mail", "sms"] {
        client
            .producer()
            .enqueue(&job(queue))
            .await
            .expect("enqueue");
    }
    assert!(ops.pause_queue("mail").await.expect("pause"));
    assert!(
        !ops.pause_queue("mail").await.expect("pause again"),
        "a second pause changes nothing"
    );
    let paused = ops.paused_queues().await.expect("list");
    assert_eq!(paused.len(), 1);
    assert_eq!(paused[0].queue, "mail");

    // Keys and replays work as ever on a paused queue.
    let keyed = job("mail").with_key("order-1");
    let first = client.producer().enqueue(&keyed).await.expect("keyed");
    let replay = client.producer().enqueue(&keyed).await.expect("replay");
    assert_eq!(
        (first.outcome, replay.outcome, replay.job_id),
        (Outcome::Accepted, Outcome::Replayed, first.job_id)
    );
    let mut other = keyed.clone();
    other.payload = br#"{"other":true}"#.to_vec();
    let conflict = client
        .producer()
        .enqueue(&other)
        .await
        .expect_err("conflict");
    assert!(
        matches!(conflict, flexiq_core::Error::Conflict(_)),
        "{conflict}"
    );

    assert_eq!(claim(&client, &["mail", "sms"]).await, ["sms"]);
    assert!(claim(&client, &["mail"]).await.is_empty());
    assert_eq!(
        common::scalar(
            &client,
            "SELECT count(*) FROM {schema}.jobs WHERE queue = 'mail' AND state = 'available'"
        )
        .await,
        3,
        "the paused queue's jobs wait"
    );

    assert!(ops.resume_queue("mail").await.expect("resume"));
    assert!(!ops.resume_queue("mail").await.expect("resume again"));
    assert!(ops.paused_queues().await.expect("list").is_empty());
    assert_eq!(claim(&client, &["mail"]).await, ["mail", "mail", "mail"]);
}

#[tokio::test]
async fn a_pause_waits_for_the_claims_under_way_and_the_claims_after_it_see_it() {
    let client = Arc::new(common::client().await);
    let schema = client.schema().to_string();
    client
        .producer()
        .enqueue(&job("mail"))
        .await
        .expect("enqueue");

    // A claim under way: its transaction took the queue's lock and has not committed.
    let mut claiming = session().await;
    sqlx::query("BEGIN")
        .execute(&mut claiming)
        .await
        .expect("begin");
    let open: Vec<String> =
        sqlx::query_scalar(&format!("SELECT {schema}.open_queues(ARRAY['mail'])"))
            .fetch_one(&mut claiming)
            .await
            .expect("open");
    assert_eq!(open, ["mail"]);
    let pause = {
        let client = Arc::clone(&client);
        tokio::spawn(async move { client.operations().pause_queue("mail").await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !pause.is_finished(),
        "the pause returned while a claim was under way"
    );
    sqlx::query("COMMIT")
        .execute(&mut claiming)
        .await
        .expect("commit");
    assert!(pause.await.expect("join").expect("pause"));

    // A pause that has not committed holds claims back; once it commits they find the queue
    // paused, though their statement began before the commit.
    assert!(client
        .operations()
        .resume_queue("mail")
        .await
        .expect("resume"));
    let mut pausing = session().await;
    sqlx::query("BEGIN")
        .execute(&mut pausing)
        .await
        .expect("begin");
    sqlx::query(&format!("SELECT {schema}.pause_queue('mail')"))
        .execute(&mut pausing)
        .await
        .expect("pause in a transaction");
    let waiting = {
        let client = Arc::clone(&client);
        tokio::spawn(async move { claim(&client, &["mail"]).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !waiting.is_finished(),
        "a claim went past an uncommitted pause"
    );
    sqlx::query("COMMIT")
        .execute(&mut pausing)
        .await
        .expect("commit");
    assert!(
        waiting.await.expect("join").is_empty(),
        "a claim started a paused job"
    );
}

#[tokio::test]
async fn a_resume_announces_the_queue_to_idle_workers() {
    let client = common::client().await;
    client
        .operations()
        .pause_queue("mail")
        .await
        .expect("pause");
    let mut listener = sqlx::postgres::PgListener::connect(&common::server().url())
        .await
        .expect("listen");
    listener
        .listen(&format!("flexiq_{}", client.schema()))
        .await
        .expect("listen");
    client
        .operations()
        .resume_queue("mail")
        .await
        .expect("resume");
    let note = tokio::time::timeout(common::WITHIN, listener.recv())
        .await
        .expect("announced in time")
        .expect("notification");
    assert_eq!(note.payload(), "mail");
}

#[tokio::test]
async fn the_sql_functions_refuse_a_queue_name_they_cannot_store() {
    let client = common::client().await;
    let schema = client.schema();
    let mut c = session().await;
    for bad in ["''", "NULL", "repeat('q', 129)"] {
        let err = sqlx::query(&format!("SELECT {schema}.pause_queue({bad})"))
            .execute(&mut c)
            .await
            .expect_err(bad);
        let db = err.as_database_error().expect("a database error");
        assert_eq!(db.code().as_deref(), Some("22023"), "{bad}: {db}");
        assert!(
            db.message().contains("queue must be 1 to 128 bytes"),
            "{db}"
        );
    }
    let err = client
        .operations()
        .pause_queue("")
        .await
        .expect_err("empty");
    assert!(err.to_string().contains("queue"), "{err}");
    assert!(client
        .operations()
        .paused_queues()
        .await
        .expect("list")
        .is_empty());
}
