//! Upgrading a schema that holds jobs: a schema migrated to an earlier version, with jobs in
//! every state, is migrated to the latest and keeps its jobs.

use crate::common;

use flexiq_core::{Attempt, Client, ClientConfig};
use sqlx::Connection;

const BOOTSTRAP: &str = include_str!("../../sql/migrate/bootstrap.sql");
const JOBS: &str = include_str!("../../migrations/0001_jobs.sql");
const RUNNING: &str = include_str!("../../migrations/0002_running.sql");

/// Jobs in every state, as a schema at version 2 could hold them; `stale` is a finished job
/// that kept a lease (nothing in that version stopped it), `running` holds a live lease.
const JOBS_AT_VERSION_2: &str = "
INSERT INTO {schema}.jobs (id, queue, task, payload, state, priority, run_at, attempt,
                           max_attempts, retry_initial_ms, retry_max_ms, retry_multiplier,
                           retry_jitter, tags, key_held, created_at, lease_expires_at)
SELECT n, 'default', s.state, '\\x7b7d', s.state, 0, now(), s.attempt, 3, 1000, 60000, 2, 0,
       '[]', false, now(), s.lease
  FROM (VALUES (1, 'available', 0, NULL::timestamptz),
               (2, 'scheduled', 0, NULL),
               (3, 'retryable', 1, NULL),
               (4, 'running', 1, now() + interval '1 hour'),
               (5, 'completed', 1, NULL),
               (6, 'dead', 3, NULL),
               (7, 'cancelled', 0, NULL),
               (8, 'completed', 1, now() - interval '1 hour')) AS s(n, state, attempt, lease)";

/// Builds schema `schema` as version 2 left it, from that version's migrations, and fills it.
async fn schema_at_version_2(schema: &str) {
    let mut c = sqlx::PgConnection::connect(&common::server().url())
        .await
        .expect("connect");
    let sql = [BOOTSTRAP, JOBS, RUNNING, JOBS_AT_VERSION_2]
        .join(";\n")
        .replace("{schema}", schema);
    sqlx::raw_sql(&sql)
        .execute(&mut c)
        .await
        .expect("version 2");
    sqlx::raw_sql(&format!(
        "INSERT INTO {schema}.schema_migrations (version, description)
         VALUES (1, 'jobs'), (2, 'running')"
    ))
    .execute(&mut c)
    .await
    .expect("record versions");
}

#[tokio::test]
async fn a_schema_holding_jobs_in_every_state_is_upgraded_with_its_jobs_intact() {
    let schema = format!("upgrade_{}", std::process::id());
    schema_at_version_2(&schema).await;
    let mut config = ClientConfig::new(common::server().url());
    config.schema = schema;
    let client = Client::connect(&config).await.expect("connect");
    let before = common::text(&client, JOB_ROWS).await;

    assert_eq!(
        client.migrate().await.expect("migrate"),
        flexiq_core::schema::migration_count() - 2 + flexiq_core::schema::definition_count()
    );

    // The jobs are as they were, but for the finished job's stale lease.
    let after = common::text(&client, JOB_ROWS).await;
    assert_eq!(
        after,
        before.replace("8 completed 1 lease", "8 completed 1 none"),
        "{before}"
    );
    assert!(before.contains("4 running 1 lease") && before.contains("8 completed 1 lease"));

    // The constraint holds, checked; the lease indexes cover leased jobs only.
    assert_eq!(
        common::scalar(
            &client,
            "SELECT count(*) FROM pg_constraint
              WHERE conrelid = '{schema}.jobs'::regclass
                AND conname = 'jobs_leased_while_running' AND convalidated"
        )
        .await,
        1
    );
    assert!(common::text(
        &client,
        "SELECT pg_get_indexdef('{schema}.jobs_leases'::regclass)"
    )
    .await
    .ends_with("(lease_expires_at) WHERE (lease_expires_at IS NOT NULL)"));
    assert!(common::text(
        &client,
        "SELECT pg_get_indexdef('{schema}.jobs_claims'::regclass)"
    )
    .await
    .ends_with("(claim_token) WHERE (lease_expires_at IS NOT NULL)"));

    // The upgraded schema works: the running job completes, a lease cannot outlive its run.
    let done = client
        .worker_store()
        .complete(&[Attempt {
            job_id: 4,
            attempt: 1,
        }])
        .await
        .expect("complete");
    assert_eq!(done.len(), 1);
    let pool = sqlx::PgPool::connect(&common::server().url())
        .await
        .expect("connect");
    let refused = sqlx::query(&format!(
        "UPDATE {}.jobs SET lease_expires_at = now() WHERE id = 5",
        client.schema()
    ))
    .execute(&pool)
    .await
    .expect_err("a lease on a completed job");
    assert!(
        refused.to_string().contains("jobs_leased_while_running"),
        "{refused}"
    );
    pool.close().await;
}

/// Every job as `id state attempt lease|none`, in id order.
const JOB_ROWS: &str = "
SELECT string_agg(concat_ws(' ', id, state, attempt,
                            CASE WHEN lease_expires_at IS NULL THEN 'none' ELSE 'lease' END),
                  ', ' ORDER BY id)
  FROM {schema}.jobs";

#[tokio::test]
async fn pending_migrations_count_what_migrate_would_apply() {
    let everything =
        flexiq_core::schema::migration_count() + flexiq_core::schema::definition_count();
    let mut config = ClientConfig::new(common::server().url());
    config.schema = format!("pending_{}", std::process::id());
    let client = Client::connect(&config).await.expect("connect");
    assert_eq!(
        client.pending_migrations().await.expect("pending"),
        everything,
        "a schema never migrated"
    );
    assert_eq!(client.migrate().await.expect("migrate"), everything);
    assert_eq!(client.pending_migrations().await.expect("pending"), 0);

    // A library with a newer migration and a changed function, as the schema sees it.
    common::execute(
        &client,
        "DELETE FROM {schema}.schema_migrations WHERE version = 2",
    )
    .await;
    common::execute(
        &client,
        "UPDATE {schema}.schema_definitions SET checksum = '\\x00'
          WHERE name = (SELECT min(name) FROM {schema}.schema_definitions)",
    )
    .await;
    assert_eq!(client.pending_migrations().await.expect("pending"), 2);
}
