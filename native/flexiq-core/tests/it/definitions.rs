//! Functions and triggers are definitions applied again by checksum: one whose recorded
//! checksum differs (or is missing) is applied again on the next migrate, one that has not
//! changed is left alone.

use crate::common;

use flexiq_core::{Client, ClientConfig};

/// The definition the tests break and mend: its body, as the file has it, is checked below.
const MICROS_FILE: &str = include_str!("../../sql/functions/micros_to_timestamptz.sql");

/// Replaces micros_to_timestamptz, same signature, with a body that ignores its argument.
const BREAK_MICROS: &str =
    "CREATE OR REPLACE FUNCTION {schema}.micros_to_timestamptz(p_micros bigint)
    RETURNS timestamptz LANGUAGE sql AS $$ SELECT timestamptz 'epoch' $$";

/// Whether micros_to_timestamptz converts as its file says: 1 hour and 1 microsecond.
async fn micros_converts(client: &Client) -> bool {
    1 == common::scalar(
        client,
        "SELECT count(*) WHERE {schema}.micros_to_timestamptz(3600000001)
                             = timestamptz 'epoch' + interval '1 hour 1 microsecond'",
    )
    .await
}

async fn micros_source(client: &Client) -> String {
    common::text(
        client,
        "SELECT prosrc FROM pg_proc WHERE oid = '{schema}.micros_to_timestamptz'::regproc",
    )
    .await
}

async fn micros_checksum(client: &Client) -> String {
    common::text(
        client,
        "SELECT coalesce((SELECT encode(checksum, 'hex') FROM {schema}.schema_definitions
                           WHERE name = 'micros_to_timestamptz'), 'none')",
    )
    .await
}

#[tokio::test]
async fn a_definition_whose_checksum_differs_or_is_missing_is_applied_again() {
    let client = common::client().await;
    assert!(micros_converts(&client).await);
    let recorded = micros_checksum(&client).await;

    common::execute(&client, BREAK_MICROS).await;
    common::execute(
        &client,
        "UPDATE {schema}.schema_definitions SET checksum = '\\x00'
          WHERE name = 'micros_to_timestamptz'",
    )
    .await;
    assert!(!micros_converts(&client).await, "the body was replaced");
    assert_eq!(client.migrate().await.expect("migrate"), 1);
    assert!(micros_converts(&client).await);
    assert!(MICROS_FILE.contains(micros_source(&client).await.as_str()));
    assert_eq!(micros_checksum(&client).await, recorded);

    common::execute(&client, BREAK_MICROS).await;
    common::execute(
        &client,
        "DELETE FROM {schema}.schema_definitions WHERE name = 'micros_to_timestamptz'",
    )
    .await;
    assert_eq!(client.migrate().await.expect("migrate"), 1);
    assert!(micros_converts(&client).await);
    assert_eq!(micros_checksum(&client).await, recorded);
}

#[tokio::test]
async fn an_unchanged_definition_is_not_applied_again() {
    let client = common::client().await;
    common::execute(&client, BREAK_MICROS).await;
    assert_eq!(client.migrate().await.expect("migrate"), 0);
    // Connecting with migrate on finds nothing to do either.
    let mut config = ClientConfig::new(common::server().url());
    config.schema = client.schema().to_owned();
    config.migrate = true;
    Client::connect(&config).await.expect("connect and migrate");
    assert!(
        !micros_converts(&client).await,
        "a definition whose checksum matches was applied again"
    );
}

#[tokio::test]
async fn a_trigger_is_created_again_with_its_function() {
    let client = common::client().await;
    let triggers = "SELECT count(*) FROM pg_trigger
                     WHERE tgrelid = '{schema}.jobs'::regclass AND tgname = 'jobs_release_key'";
    common::execute(&client, "DROP TRIGGER jobs_release_key ON {schema}.jobs").await;
    common::execute(
        &client,
        "DELETE FROM {schema}.schema_definitions WHERE name = 'release_key'",
    )
    .await;
    assert_eq!(common::scalar(&client, triggers).await, 0);
    assert_eq!(client.migrate().await.expect("migrate"), 1);
    assert_eq!(common::scalar(&client, triggers).await, 1);

    // The trigger works again: cancelling a keyed job releases its key.
    let id = common::accepted(
        &client,
        &flexiq_core::JobRequest::new("t", b"[1]".to_vec()).with_key("k"),
    )
    .await;
    assert!(client.operations().cancel(id).await.expect("cancel"));
    let job = client
        .operations()
        .get_job(id)
        .await
        .expect("read")
        .expect("job");
    assert!(!job.key_held);
}

#[tokio::test]
async fn every_definition_applied_again_leaves_a_working_schema() {
    let client = common::client().await;
    common::execute(&client, "DELETE FROM {schema}.schema_definitions").await;
    assert_eq!(
        client.migrate().await.expect("migrate"),
        flexiq_core::schema::definition_count()
    );
    assert_eq!(client.migrate().await.expect("migrate again"), 0);
    let request = flexiq_core::JobRequest::new("t", b"[1]".to_vec()).with_key("k");
    let first = client.producer().enqueue(&request).await.expect("enqueue");
    let replay = client.producer().enqueue(&request).await.expect("replay");
    assert_eq!(first.job_id, replay.job_id);
    assert_eq!(replay.outcome, flexiq_core::Outcome::Replayed);
}

#[tokio::test]
async fn an_upgrade_drops_the_trigger_that_announced_inside_enqueues() {
    let client = common::client().await;
    // The trigger of earlier versions, as they left it.
    common::execute(
        &client,
        "CREATE FUNCTION {schema}.announce_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN PERFORM pg_notify('x', 'y'); RETURN NULL; END $$",
    )
    .await;
    common::execute(
        &client,
        "CREATE TRIGGER jobs_announce_inserted AFTER INSERT ON {schema}.jobs
         FOR EACH STATEMENT EXECUTE FUNCTION {schema}.announce_inserted()",
    )
    .await;
    common::execute(
        &client,
        "UPDATE {schema}.schema_definitions SET checksum = '\\x00' WHERE name = 'announce'",
    )
    .await;
    assert_eq!(client.migrate().await.expect("migrate"), 1);
    let left = "SELECT count(*) FROM pg_trigger WHERE tgrelid = '{schema}.jobs'::regclass
                  AND tgname = 'jobs_announce_inserted'";
    assert_eq!(common::scalar(&client, left).await, 0);
    let function = "SELECT count(*) FROM pg_proc
                     WHERE pronamespace = '{schema}'::regnamespace AND proname = 'announce_inserted'";
    assert_eq!(common::scalar(&client, function).await, 0);
}
