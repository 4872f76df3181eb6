//! Maintenance: the election among clients of one schema, and what a pass does (keys released,
//! expired leases rescued, finished jobs pruned by retention in bounded batches).

use crate::common;

use std::time::Duration;

use flexiq_core::maintenance::MAX_BATCHES_PER_PASS;
use flexiq_core::{Client, JobRequest, Maintained, MaintenanceReport, Retention};

const HOUR_MS: i64 = 3_600_000;

fn retention(batch_size: i64) -> Retention {
    Retention {
        completed_ms: HOUR_MS,
        cancelled_ms: 2 * HOUR_MS,
        dead_ms: 3 * HOUR_MS,
        batch_size,
    }
}

/// Inserts `n` jobs of task `task` in `state`, finished `minutes` ago; with `held_for`, each
/// holds a key of its own until that interval from now (negative: a window already closed).
async fn finished(
    client: &Client,
    task: &str,
    n: i64,
    state: &str,
    minutes: i64,
    held_for: Option<&str>,
) {
    let (key_held, held_until) = match held_for {
        Some(window) => ("true", format!("now() + interval '{window}'")),
        None => ("false", "NULL".to_string()),
    };
    common::execute(
        client,
        &format!(
            "INSERT INTO {{schema}}.jobs (queue, task, payload, state, priority, run_at, attempt,
                 max_attempts, retry_initial_ms, retry_max_ms, retry_multiplier, retry_jitter,
                 tags, key_scope, key_digest, key_held, held_until, created_at, finished_at)
             SELECT 'default', '{task}', '{{}}', '{state}', 0, now(), 1, 3, 1000, 60000, 2, 0,
                    '[]', '{task}', sha256(('{task}' || i)::bytea), {key_held}, {held_until},
                    now() - interval '1 day', now() - {minutes} * interval '1 minute'
               FROM generate_series(1, {n}) i"
        ),
    )
    .await;
}

async fn count(client: &Client, task: &str) -> i64 {
    common::scalar(
        client,
        &format!("SELECT count(*) FROM {{schema}}.jobs WHERE task = '{task}'"),
    )
    .await
}

#[tokio::test]
async fn pruning_keeps_each_final_state_for_its_retention_and_every_job_whose_key_is_held() {
    let client = common::client().await;
    finished(&client, "completed_old", 250, "completed", 90, None).await;
    finished(&client, "completed_new", 10, "completed", 30, None).await;
    finished(&client, "cancelled_old", 7, "cancelled", 150, None).await;
    finished(&client, "cancelled_new", 5, "cancelled", 90, None).await;
    finished(&client, "dead_old", 6, "dead", 200, None).await;
    finished(&client, "dead_new", 4, "dead", 150, None).await;
    finished(&client, "held", 3, "completed", 90, Some("1 hour")).await;
    finished(&client, "released", 2, "completed", 90, Some("-1 minute")).await;
    let waiting = common::accepted(&client, &JobRequest::new("waiting", b"{}".to_vec())).await;
    common::execute(
        &client,
        &format!(
            "UPDATE {{schema}}.jobs SET created_at = now() - interval '1 day' WHERE id = {waiting}"
        ),
    )
    .await;

    // Two rows a statement: the pass stops at its cap, with completed jobs left over.
    let first = client
        .maintenance()
        .run_maintenance(&retention(2))
        .await
        .expect("pass");
    assert_eq!(
        (
            first.keys_released,
            first.completed_deleted,
            first.cancelled_deleted,
            first.dead_deleted
        ),
        (2, 2 * MAX_BATCHES_PER_PASS as u64, 7, 6),
        "{first:?}"
    );
    assert!(first.more_to_prune);

    let second = client
        .maintenance()
        .run_maintenance(&retention(1000))
        .await
        .expect("pass");
    assert_eq!(
        second,
        MaintenanceReport {
            completed_deleted: 252 - 2 * MAX_BATCHES_PER_PASS as u64,
            ..MaintenanceReport::default()
        }
    );
    for (task, left) in [
        ("completed_old", 0),
        ("released", 0),
        ("cancelled_old", 0),
        ("dead_old", 0),
        ("completed_new", 10),
        ("cancelled_new", 5),
        ("dead_new", 4),
        ("held", 3),
        ("waiting", 1),
    ] {
        assert_eq!(count(&client, task).await, left, "{task}");
    }
    assert_eq!(
        client
            .maintenance()
            .run_maintenance(&retention(1000))
            .await
            .expect("pass"),
        MaintenanceReport::default(),
        "nothing left to do"
    );
}

#[tokio::test]
async fn retentions_and_batch_sizes_out_of_range_are_refused() {
    let client = common::client().await;
    let negative = Retention {
        dead_ms: -1,
        ..retention(10)
    };
    for bad in [negative, retention(0), retention(100_001)] {
        let e = client
            .maintenance()
            .run_maintenance(&bad)
            .await
            .expect_err("refused");
        assert!(matches!(e, flexiq_core::Error::InvalidArgument(_)), "{e}");
    }
}

#[tokio::test]
async fn a_pass_releases_expired_keys_and_rescues_leases_of_a_queue_nobody_works() {
    let client = common::client().await;
    let mut keyed = JobRequest::new("keyed", b"{}".to_vec()).with_key("k");
    keyed.key_retention_ms = Some(HOUR_MS);
    let keyed = common::accepted(&client, &keyed).await;
    common::execute(
        &client,
        &format!("UPDATE {{schema}}.jobs SET state = 'completed', finished_at = now() WHERE id = {keyed}"),
    )
    .await;
    common::execute(
        &client,
        &format!("UPDATE {{schema}}.jobs SET held_until = now() - interval '1 second' WHERE id = {keyed}"),
    )
    .await;
    let mut orphan = JobRequest::new("orphan", b"{}".to_vec());
    orphan.queue = "nobody".into();
    let orphan = common::accepted(&client, &orphan).await;
    client
        .worker_store()
        .claim(
            &["nobody".into()],
            &["orphan".into()],
            1,
            Duration::from_millis(10),
            1,
        )
        .await
        .expect("claim");
    // The lease runs out by the server's clock, as the pass's rescue judges it.
    common::until_sql(
        &client,
        &format!("SELECT lease_expires_at < now() FROM {{schema}}.jobs WHERE id = {orphan}"),
    )
    .await;

    let Maintained::Ran(report) = client
        .maintenance()
        .maintain(&retention(1000))
        .await
        .expect("pass")
    else {
        panic!("the only client is elected");
    };
    assert_eq!(report.keys_released, 1);
    assert_eq!(report.rescued.len(), 1, "{report:?}");
    assert_eq!(
        (report.rescued[0].id, report.rescued[0].queue.as_str()),
        (orphan, "nobody")
    );
    assert!(
        !client
            .operations()
            .get_job(keyed)
            .await
            .expect("get")
            .expect("job")
            .key_held
    );
    assert_eq!(
        client
            .operations()
            .get_job(orphan)
            .await
            .expect("get")
            .expect("job")
            .state,
        "retryable"
    );
}

/// The process id of the session holding `schema`'s maintenance lock, 0 when none holds it.
async fn holder(client: &Client) -> i64 {
    common::scalar(
        client,
        "SELECT coalesce(max(l.pid), 0)::bigint FROM pg_locks l
          WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
            AND (l.classid::bigint << 32 | l.objid::bigint)
                = hashtextextended('flexiq.maintenance.{schema}', 0)",
    )
    .await
}

/// Whether `client` ran a pass: it runs its schema's maintenance.
async fn ran(client: &Client) -> bool {
    let outcome = client
        .maintenance()
        .maintain(&retention(1000))
        .await
        .expect("maintain");
    matches!(outcome, Maintained::Ran(_))
}

/// Whether another client's session holds the lock, as `client` finds.
async fn elsewhere(client: &Client) -> bool {
    let outcome = client
        .maintenance()
        .maintain(&retention(1000))
        .await
        .expect("maintain");
    outcome == Maintained::ElsewhereRun
}

#[tokio::test]
async fn one_client_of_a_schema_is_elected_and_another_takes_over_when_its_session_ends() {
    let a = common::client().await;
    let schema = a.schema().to_string();
    let b = common::client_with(|c| c.schema = schema.clone()).await;
    let c = common::client_with(|c| c.schema = schema.clone()).await;
    let other_schema = common::client().await;

    assert!(ran(&a).await);
    assert!(elsewhere(&b).await);
    assert!(elsewhere(&c).await);
    assert!(ran(&a).await);
    assert!(a.maintenance().runs_maintenance().await && !b.maintenance().runs_maintenance().await);
    assert!(ran(&other_schema).await, "each schema elects its own");

    // The holder's session ends as a dying process's does.
    let pid = holder(&a).await;
    assert_ne!(pid, 0);
    common::execute(&a, &format!("SELECT pg_terminate_backend({pid})")).await;
    common::eventually("b takes over once a's session is gone", || ran(&b)).await;
    assert!(
        a.maintenance().maintain(&retention(1000)).await.is_err(),
        "a finds its session lost"
    );
    assert!(elsewhere(&a).await, "and b holds it now");
    assert!(elsewhere(&c).await);

    // Resigning frees it at once.
    b.maintenance().resign_maintenance().await;
    assert!(!b.maintenance().runs_maintenance().await);
    assert!(ran(&c).await);
}

#[tokio::test]
async fn a_client_whose_role_may_not_delete_jobs_never_takes_the_lock() {
    let owner = common::client().await;
    let role = format!("{}_worker", owner.schema());
    common::execute(&owner, &format!("CREATE ROLE {role} LOGIN")).await;
    owner
        .operations()
        .grant(&role, flexiq_core::Grant::Worker)
        .await
        .expect("grant");
    let mut config = flexiq_core::ClientConfig::new(common::server().url().replacen(
        "postgres@",
        &format!("{role}@"),
        1,
    ));
    config.schema = owner.schema().to_owned();
    let worker = Client::connect(&config)
        .await
        .expect("connect as the worker");

    let outcome = worker
        .maintenance()
        .maintain(&retention(1000))
        .await
        .expect("maintain");
    assert_eq!(outcome, Maintained::NotPermitted);
    assert_eq!(holder(&owner).await, 0, "the lock stays free");
    assert!(ran(&owner).await, "for a client that may maintain");
}
