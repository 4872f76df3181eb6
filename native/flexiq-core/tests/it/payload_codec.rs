//! Payloads a binding's codec encoded: stored as encoded with the codec's id, compared on replay
//! by the codec's digest of the serialized payload, handed to workers with the codec's id.

use crate::common;

use std::time::Duration;

use flexiq_core::{Encoded, Error, Flow, JobRequest, Outcome};
use sha2::{Digest, Sha256};

const PAYLOAD: &[u8] = br#"{"card":"4111111111111111"}"#;

/// A request whose payload a codec encoded into `ciphertext` (which differs call to call).
fn encoded(key: &str, payload: &[u8], ciphertext: &[u8]) -> JobRequest {
    let mut r = JobRequest::new("charge", payload.to_vec()).with_key(key);
    r.encoded = Some(Encoded {
        codec: "test-codec".into(),
        bytes: ciphertext.to_vec(),
        digest: Sha256::digest(payload).to_vec(),
    });
    r
}

#[tokio::test]
async fn the_encoded_bytes_are_stored_with_the_codec_and_claimed_with_it() {
    let client = common::client().await;
    let id = common::accepted(&client, &encoded("order-1", PAYLOAD, b"\x01sealed-1")).await;
    let stored = client
        .operations()
        .get_payload(id)
        .await
        .expect("read")
        .expect("found");
    assert_eq!(stored.payload, b"\x01sealed-1");
    assert_eq!(stored.payload_codec.as_deref(), Some("test-codec"));
    let job = client
        .operations()
        .get_job(id)
        .await
        .expect("job")
        .expect("found");
    assert_eq!(job.payload_codec.as_deref(), Some("test-codec"));

    let claimed = client
        .worker_store()
        .claim(
            &["default".into()],
            &["charge".into()],
            1,
            Duration::from_secs(30),
            1,
        )
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].payload, b"\x01sealed-1");
    assert_eq!(claimed[0].payload_codec.as_deref(), Some("test-codec"));
}

#[tokio::test]
async fn replays_compare_the_digest_never_the_encoded_bytes() {
    let client = common::client().await;
    let first = client
        .producer()
        .enqueue(&encoded("order-2", PAYLOAD, b"\x01sealed-a"))
        .await
        .expect("first");
    let again = client
        .producer()
        .enqueue(&encoded("order-2", PAYLOAD, b"\x01sealed-b"))
        .await
        .expect("replay");
    assert_eq!(again.outcome, Outcome::Replayed);
    assert_eq!(again.job_id, first.job_id);

    // In a batch, through enqueue_keyed's comparison.
    let batch = client
        .producer()
        .enqueue_many(&[
            encoded("order-2", PAYLOAD, b"\x01sealed-c"),
            encoded("order-3", PAYLOAD, b"\x01sealed-d"),
        ])
        .await
        .expect("batch");
    assert_eq!(batch[0].outcome, Outcome::Replayed);
    assert_eq!(batch[0].job_id, first.job_id);
    assert_eq!(batch[1].outcome, Outcome::Accepted);

    // Another payload under the key: a conflict naming the payload, alone and in a batch.
    let other = encoded("order-2", br#"{"card":"5500"}"#, b"\x01sealed-e");
    let err = client
        .producer()
        .enqueue(&other)
        .await
        .expect_err("conflict");
    let Error::Conflict(c) = &err else {
        panic!("expected a conflict, got {err}")
    };
    assert_eq!(c.fields, ["payload"]);
    let err = client
        .producer()
        .enqueue_many(&[encoded("order-4", PAYLOAD, b"\x01x"), other])
        .await
        .expect_err("batch conflict");
    let Error::Conflict(c) = &err else {
        panic!("expected a conflict, got {err}")
    };
    assert_eq!(
        (c.index, c.fields.as_slice()),
        (1, ["payload".to_string()].as_slice())
    );
    assert!(client
        .operations()
        .find_by_key("default", "order-4")
        .await
        .expect("find")
        .is_none());
}

#[tokio::test]
async fn a_job_stored_in_clear_replays_through_a_sha256_digest() {
    let client = common::client().await;
    let clear = JobRequest::new("charge", PAYLOAD.to_vec()).with_key("order-5");
    let first = client.producer().enqueue(&clear).await.expect("clear");
    let again = client
        .producer()
        .enqueue(&encoded("order-5", PAYLOAD, b"\x01sealed"))
        .await
        .expect("replay");
    assert_eq!(
        (again.outcome, again.job_id),
        (Outcome::Replayed, first.job_id)
    );
}

#[tokio::test]
async fn a_debounce_replaces_the_encoded_payload_and_its_digest() {
    let client = common::client().await;
    let debounced = |payload: &[u8], sealed: &[u8]| {
        let mut r = encoded("burst", payload, sealed);
        r.flow = Flow {
            debounce_ms: Some(3_600_000),
            ..Flow::default()
        };
        r
    };
    let first = client
        .producer()
        .enqueue(&debounced(PAYLOAD, b"\x01one"))
        .await
        .expect("first");
    let latest = br#"{"card":"4000"}"#;
    let replaced = client
        .producer()
        .enqueue(&debounced(latest, b"\x01two"))
        .await
        .expect("replace");
    assert_eq!(
        (replaced.outcome, replaced.job_id),
        (Outcome::Replaced, first.job_id)
    );
    let stored = client
        .operations()
        .get_payload(first.job_id)
        .await
        .expect("read")
        .expect("found");
    assert_eq!(stored.payload, b"\x01two");
    let digest = common::text(
        &client,
        &format!(
            "SELECT encode(payload_digest, 'hex') FROM {{schema}}.jobs WHERE id = {}",
            first.job_id
        ),
    )
    .await;
    let expected: String = Sha256::digest(latest)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(digest, expected);
}

#[tokio::test]
async fn a_codec_id_and_digest_are_checked() {
    let client = common::client().await;
    let mut bad = encoded("order-6", PAYLOAD, b"\x01sealed");
    bad.encoded.as_mut().expect("encoded").codec = "no spaces".into();
    assert!(client
        .producer()
        .enqueue(&bad)
        .await
        .expect_err("id")
        .to_string()
        .contains("payload codec id"));
    let mut short = encoded("order-6", PAYLOAD, b"\x01sealed");
    short.encoded.as_mut().expect("encoded").digest = vec![0; 4];
    assert!(client
        .producer()
        .enqueue(&short)
        .await
        .expect_err("digest")
        .to_string()
        .contains("must be 16 to 64 bytes, got 4"));
}

/// Concurrent single calls may share a statement (enqueue_calls): each still gets the answer
/// the digest gives it, whatever its encoded bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_calls_each_get_the_answer_of_their_digest() {
    let client = std::sync::Arc::new(common::client_with_pool(4).await);
    let held = common::accepted(&client, &encoded("held", PAYLOAD, b"\x01first")).await;
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..24u8 {
        let client = client.clone();
        calls.spawn(async move {
            let request = match i % 3 {
                0 => encoded("held", PAYLOAD, &[1, i]),
                1 => encoded("held", br#"{"card":"other"}"#, &[1, i]),
                _ => encoded(&format!("fresh-{i}"), PAYLOAD, &[1, i]),
            };
            (i % 3, client.producer().enqueue(&request).await)
        });
    }
    while let Some(done) = calls.join_next().await {
        match done.expect("joined") {
            (0, Ok(e)) => assert_eq!((e.outcome, e.job_id), (Outcome::Replayed, held)),
            (1, Err(Error::Conflict(c))) => assert_eq!(c.fields, ["payload"]),
            (2, Ok(e)) => assert_eq!(e.outcome, Outcome::Accepted),
            (kind, other) => panic!("call of kind {kind} got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_bulk_of_encoded_entries_is_one_statement() {
    let client = common::client().await;
    let mut batch: Vec<JobRequest> = (0..200u8)
        .map(|i| encoded(&format!("bulk-{i}"), PAYLOAD, &[1, i]))
        .collect();
    batch.extend((0..200u8).map(|i| {
        let mut r = encoded("unused", PAYLOAD, &[2, i]);
        r.key = None;
        r
    }));
    // Keyed entries go through enqueue_keyed, whose inserts run inside it.
    let writes = async || {
        common::statements_like(&client, "%{schema}.enqueue_keyed(%").await
            + common::insert_statements(&client).await
    };
    let before = writes().await;
    let enqueued = client.producer().enqueue_many(&batch).await.expect("bulk");
    assert_eq!(enqueued.len(), 400);
    assert!(enqueued.iter().all(|e| e.outcome == Outcome::Accepted));
    assert_eq!(writes().await - before, 1);
}
