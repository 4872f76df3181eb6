//! The public SQL function `{schema}.enqueue`, the producer API for every language: it
//! deduplicates against the core's own enqueue for the same key, returns conflicts as data and
//! refuses bad input with SQLSTATE 22023.

use crate::common;

use flexiq_core::{keys, Client, Grant, JobRequest, Outcome, RetryPolicy, Schedule};
use serde_json::Value;
use sqlx::{Connection, PgConnection};

const TASK: &str = "charge_customer";
const PAYLOAD: &[u8] = br#"{"amountCents":1000,"customerId":42}"#;

/// One row of `{schema}.enqueue`.
#[derive(Debug)]
struct SqlEnqueued {
    job_id: i64,
    outcome: String,
    accepted: Option<Value>,
}

/// Calls `{schema}.enqueue` as the role of `url`, hashing `key` as every binding does, with
/// `options` as JSON (`None`: the function's default).
async fn sql_enqueue_as(
    url: &str,
    schema: &str,
    payload: &[u8],
    key: Option<&str>,
    options: Option<&str>,
) -> Result<SqlEnqueued, sqlx::Error> {
    let mut connection = PgConnection::connect(url).await?;
    let sql = match options {
        Some(_) => format!(
            "SELECT job_id, outcome, accepted::text FROM {schema}.enqueue($1, $2, $3, $4, \
             options => $5::jsonb)"
        ),
        None => {
            format!("SELECT job_id, outcome, accepted::text FROM {schema}.enqueue($1, $2, $3, $4)")
        }
    };
    let mut query = sqlx::query_as::<_, (i64, String, Option<String>)>(&sql)
        .bind(TASK)
        .bind(payload)
        .bind(key.map(keys::digest))
        .bind(key.map(keys::preview));
    if let Some(options) = options {
        query = query.bind(options);
    }
    let (job_id, outcome, accepted) = query.fetch_one(&mut connection).await?;
    connection.close().await?;
    Ok(SqlEnqueued {
        job_id,
        outcome,
        accepted: accepted.map(|text| serde_json::from_str(&text).expect("accepted is JSON")),
    })
}

async fn sql_enqueue(
    client: &Client,
    payload: &[u8],
    key: Option<&str>,
    options: Option<&str>,
) -> Result<SqlEnqueued, sqlx::Error> {
    sql_enqueue_as(
        &common::server().url(),
        client.schema(),
        payload,
        key,
        options,
    )
    .await
}

fn keyed(key: &str) -> JobRequest {
    JobRequest::new(TASK, PAYLOAD.to_vec()).with_key(key)
}

/// The SQLSTATE and message of a refused call.
fn refusal(outcome: Result<SqlEnqueued, sqlx::Error>) -> (String, String) {
    let error = outcome.expect_err("refused");
    let database = error.as_database_error().expect("a database error");
    (
        database.code().expect("a SQLSTATE").into_owned(),
        database.message().to_owned(),
    )
}

#[tokio::test]
async fn the_core_replays_a_job_the_sql_function_accepted() {
    let client = common::client().await;
    let first = sql_enqueue(&client, PAYLOAD, Some("order-1"), None)
        .await
        .expect("sql");
    assert_eq!(
        (first.outcome.as_str(), &first.accepted),
        ("accepted", &None)
    );
    let info = client
        .operations()
        .get_job(first.job_id)
        .await
        .expect("read")
        .expect("job");
    assert_eq!(info.key_preview.as_deref(), Some("or…"));
    assert_eq!(info.key_digest, Some(keys::hex(&keys::digest("order-1"))));

    let replay = client
        .producer()
        .enqueue(&keyed("order-1"))
        .await
        .expect("core");
    assert_eq!(
        (replay.job_id, replay.outcome),
        (first.job_id, Outcome::Replayed)
    );
    assert_eq!(common::job_count(&client).await, 1);
}

#[tokio::test]
async fn the_sql_function_replays_a_job_the_core_accepted() {
    let client = common::client().await;
    let first = client
        .producer()
        .enqueue(&keyed("order-2"))
        .await
        .expect("core");
    assert_eq!(first.outcome, Outcome::Accepted);

    // Spelled out, the defaults are the same request.
    let replay = sql_enqueue(&client, PAYLOAD, Some("order-2"), Some("{}"))
        .await
        .expect("sql");
    assert_eq!(
        (replay.job_id, replay.outcome.as_str(), &replay.accepted),
        (first.job_id, "replayed", &None)
    );
    // So are whole numbers written with a fraction or an exponent, and nulls.
    let explicit = r#"{"queue": "default", "priority": 0, "maxAttempts": 20.0,
        "retryPolicy": {"initialMs": 1e3, "maxMs": 3600000, "multiplier": 2, "jitter": 0.1},
        "tags": [], "timeoutMs": null, "runAt": null}"#;
    let again = sql_enqueue(&client, PAYLOAD, Some("order-2"), Some(explicit))
        .await
        .expect("sql with every default spelled out");
    assert_eq!(
        (again.job_id, again.outcome.as_str()),
        (first.job_id, "replayed")
    );
    assert_eq!(common::job_count(&client).await, 1);
}

#[tokio::test]
async fn every_option_means_what_the_core_means_by_it() {
    let client = common::client().await;
    let mut request = keyed("order-6");
    request.queue = "billing".into();
    request.priority = -3;
    request.schedule = Schedule::At {
        micros: 1_924_992_000_123_456,
    };
    request.max_attempts = 5;
    request.retry = RetryPolicy {
        initial_ms: 250,
        max_ms: 60_000,
        multiplier: 1.5,
        jitter: 0.0,
    };
    request.timeout_ms = Some(30_000);
    request.tags = vec!["b".into(), "a".into(), "b".into()];
    request.key_retention_ms = Some(86_400_000);
    let first = client.producer().enqueue(&request).await.expect("core");

    // The same instant in another offset, the tags in another order.
    let options = r#"{"queue": "billing", "priority": -3,
        "runAt": "2031-01-01T02:00:00.123456+02:00", "maxAttempts": 5,
        "retryPolicy": {"initialMs": 250, "maxMs": 60000, "multiplier": 1.5, "jitter": 0},
        "timeoutMs": 30000, "tags": ["a", "b"], "keyRetentionMs": 86400000}"#;
    let replay = sql_enqueue(&client, PAYLOAD, Some("order-6"), Some(options))
        .await
        .expect("sql");
    assert_eq!(
        (replay.job_id, replay.outcome.as_str()),
        (first.job_id, "replayed")
    );

    // A delay is not a due time.
    let mut delayed = keyed("order-7");
    delayed.schedule = Schedule::Delay { millis: 5_000 };
    let first = client.producer().enqueue(&delayed).await.expect("core");
    let replay = sql_enqueue(
        &client,
        PAYLOAD,
        Some("order-7"),
        Some(r#"{"delayMs": 5000}"#),
    )
    .await
    .expect("sql");
    assert_eq!(
        (replay.job_id, replay.outcome.as_str()),
        (first.job_id, "replayed")
    );
    let conflict = sql_enqueue(&client, PAYLOAD, Some("order-7"), None)
        .await
        .expect("sql");
    assert_eq!(conflict.outcome, "conflict");
    assert_eq!(conflict.accepted.expect("accepted")["delayMs"], 5000);
}

#[tokio::test]
async fn a_different_request_for_a_held_key_is_a_conflict_returned_as_data() {
    let client = common::client().await;
    let holder = client
        .producer()
        .enqueue(&keyed("order-3"))
        .await
        .expect("core");

    // In a transaction that the conflict must leave usable.
    let mut connection = PgConnection::connect(&common::server().url())
        .await
        .expect("connect");
    let mut tx = connection.begin().await.expect("begin");
    let (job_id, outcome, accepted): (i64, String, String) = sqlx::query_as(&format!(
        "SELECT job_id, outcome, accepted::text FROM {}.enqueue($1, $2, $3, $4)",
        client.schema()
    ))
    .bind(TASK)
    .bind(&br#"{"amountCents":2000,"customerId":42}"#[..])
    .bind(keys::digest("order-3"))
    .bind(keys::preview("order-3"))
    .fetch_one(&mut *tx)
    .await
    .expect("a conflict is no error");
    let still: i32 = sqlx::query_scalar("SELECT 1")
        .fetch_one(&mut *tx)
        .await
        .expect("the transaction goes on");
    tx.commit().await.expect("commit");
    assert_eq!(still, 1);

    assert_eq!((job_id, outcome.as_str()), (holder.job_id, "conflict"));
    let accepted: Value = serde_json::from_str(&accepted).expect("JSON");
    assert_eq!(accepted["task"], TASK);
    assert_eq!(accepted["maxAttempts"], 20);
    assert_eq!(
        accepted["payloadSha256"],
        keys::hex(&sha256(PAYLOAD)),
        "{accepted}"
    );
    assert_eq!(common::job_count(&client).await, 1);
}

fn sha256(bytes: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).to_vec()
}

#[tokio::test]
async fn without_a_digest_every_call_is_a_new_job() {
    let client = common::client().await;
    let a = sql_enqueue(&client, PAYLOAD, None, None).await.expect("a");
    let b = sql_enqueue(&client, PAYLOAD, None, None).await.expect("b");
    assert_ne!(a.job_id, b.job_id);
    assert_eq!(
        (a.outcome.as_str(), b.outcome.as_str()),
        ("accepted", "accepted")
    );
    let info = client
        .operations()
        .get_job(a.job_id)
        .await
        .expect("read")
        .expect("job");
    assert_eq!((info.task.as_str(), info.key_digest), (TASK, None));
}

#[tokio::test]
async fn bad_input_is_refused_with_sqlstate_22023_naming_the_field() {
    let client = common::client().await;
    let cases = [
        (Some("order-4"), r#"{"maxAtempts": 3}"#, "maxAtempts"),
        (Some("order-4"), r#"{"maxAttempts": 0}"#, "maxAttempts"),
        (
            Some("order-4"),
            r#"{"retryPolicy": {"initialDelayMs": 5}}"#,
            "initialDelayMs",
        ),
        (Some("order-4"), r#"{"maxAttempts": "many"}"#, "maxAttempts"),
        (Some("order-4"), r#"{"priority": 1.5}"#, "priority"),
        (Some("order-4"), r#"{"priority": 3000000000}"#, "priority"),
        (Some("order-4"), r#"{"delayMs": "soon"}"#, "delayMs"),
        (Some("order-4"), r#"{"runAt": "tomorrow"}"#, "runAt"),
        (
            Some("order-4"),
            r#"{"runAt": "2026-12-01T09:00:00"}"#,
            "runAt",
        ),
        (
            Some("order-4"),
            r#"{"runAt": "2026-13-01T09:00:00Z"}"#,
            "runAt",
        ),
        (
            Some("order-4"),
            r#"{"runAt": "2026-12-01T09:00:00Z", "delayMs": 5}"#,
            "delayMs",
        ),
        (Some("order-4"), r#"{"tags": "urgent"}"#, "tags"),
        (Some("order-4"), r#"{"retryPolicy": 5}"#, "retryPolicy"),
        (Some("order-4"), r#"[]"#, "options"),
    ];
    for (key, options, field) in cases {
        let (code, message) = refusal(sql_enqueue(&client, PAYLOAD, key, Some(options)).await);
        assert_eq!(code, "22023", "{options}: {message}");
        assert!(
            message.contains(field),
            "{options}: names {field}: {message}"
        );
    }

    // A digest must be a SHA-256: 32 bytes.
    let mut connection = PgConnection::connect(&common::server().url())
        .await
        .expect("connect");
    let short = sqlx::query(&format!(
        "SELECT * FROM {}.enqueue('t', '\\x00', $1, 'ord…')",
        client.schema()
    ))
    .bind(vec![0u8; 31])
    .execute(&mut connection)
    .await
    .expect_err("a digest of 31 bytes");
    let database = short.as_database_error().expect("a database error");
    assert_eq!(database.code().as_deref(), Some("22023"));
    assert!(
        database.message().contains("key_digest"),
        "{}",
        database.message()
    );
    assert_eq!(common::job_count(&client).await, 0);
}

#[tokio::test]
async fn a_producer_role_may_call_it_where_public_may_not() {
    let owner = common::client().await;
    common::execute(
        &owner,
        "REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA {schema} FROM PUBLIC",
    )
    .await;
    let role = format!("{}-sql-producer", owner.schema());
    common::execute(&owner, &format!("CREATE ROLE \"{role}\" LOGIN")).await;
    let url = common::server()
        .url()
        .replacen("postgres@", &format!("{role}@"), 1);

    let (code, _) =
        refusal(sql_enqueue_as(&url, owner.schema(), PAYLOAD, Some("order-5"), None).await);
    assert_eq!(code, "42501", "refused before the grant");

    owner
        .operations()
        .grant(&role, Grant::Producer)
        .await
        .expect("grant");
    let first = sql_enqueue_as(&url, owner.schema(), PAYLOAD, Some("order-5"), None)
        .await
        .expect("as the producer");
    assert_eq!(first.outcome, "accepted");
    let replay = owner
        .producer()
        .enqueue(&keyed("order-5"))
        .await
        .expect("core");
    assert_eq!(
        (replay.job_id, replay.outcome),
        (first.job_id, Outcome::Replayed)
    );
    let conflict = sql_enqueue_as(&url, owner.schema(), b"[]", Some("order-5"), None)
        .await
        .expect("a conflict as the producer");
    assert_eq!(
        (conflict.job_id, conflict.outcome.as_str()),
        (first.job_id, "conflict")
    );
}
