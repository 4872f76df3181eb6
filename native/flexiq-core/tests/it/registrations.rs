//! Worker registrations: a heartbeat registers a worker or renews it, stopping removes it, and
//! maintenance removes a worker that stopped heartbeating for a lease.

use crate::common;

use std::time::Duration;

use flexiq_core::{Registration, Retention};

fn worker(id: &str, lease: Duration) -> Registration {
    Registration {
        id: id.into(),
        name: "flexiq-worker-1".into(),
        queues: vec!["default".into(), "mail".into()],
        tasks: vec!["send".into()],
        concurrency: 8,
        lease,
        started_at_us: 1_765_000_000_123_456,
    }
}

const RETENTION: Retention = Retention {
    completed_ms: 3_600_000,
    cancelled_ms: 3_600_000,
    dead_ms: 3_600_000,
    batch_size: 1000,
};

#[tokio::test]
async fn a_heartbeat_registers_a_worker_and_renews_it_and_stopping_removes_it() {
    let client = common::client().await;
    let store = client.worker_store();
    let me = worker("0f8c", Duration::from_secs(30));
    store.heartbeat(&me).await.expect("register");
    let listed = client.operations().workers().await.expect("list");
    assert_eq!(listed.len(), 1);
    let first = &listed[0];
    assert_eq!(
        (
            first.id.as_str(),
            first.host.as_str(),
            first.pid,
            first.concurrency,
            first.lease_ms
        ),
        (
            "0f8c",
            flexiq_core::host::name(),
            i64::from(std::process::id()),
            8,
            30_000
        )
    );
    assert_eq!(first.queues, ["default", "mail"]);
    assert_eq!(first.tasks, ["send"]);
    assert_eq!(first.started_at_us, me.started_at_us);
    assert_eq!(first.version, env!("CARGO_PKG_VERSION"));

    common::until_sql(
        &client,
        "SELECT heartbeat_at < now() - interval '20 milliseconds' FROM {schema}.workers",
    )
    .await;
    store.heartbeat(&me).await.expect("heartbeat");
    let renewed = &client.operations().workers().await.expect("list")[0];
    assert!(
        renewed.heartbeat_at_us > first.heartbeat_at_us,
        "the heartbeat moved on"
    );
    assert_eq!(renewed.started_at_us, first.started_at_us);

    store.deregister("0f8c").await.expect("deregister");
    assert!(client
        .operations()
        .workers()
        .await
        .expect("list")
        .is_empty());
    store
        .deregister("0f8c")
        .await
        .expect("a second removal changes nothing");
}

#[tokio::test]
async fn maintenance_removes_a_worker_that_stopped_heartbeating_for_a_lease() {
    let client = common::client().await;
    let store = client.worker_store();
    store
        .heartbeat(&worker("gone", Duration::from_millis(300)))
        .await
        .expect("register");
    store
        .heartbeat(&worker("alive", Duration::from_secs(60)))
        .await
        .expect("register");
    let report = client
        .maintenance()
        .run_maintenance(&RETENTION)
        .await
        .expect("pass");
    assert_eq!(report.workers_removed, 0, "within its lease");
    common::until_sql(
        &client,
        "SELECT heartbeat_at < now() - interval '300 milliseconds' FROM {schema}.workers
          WHERE id = 'gone'",
    )
    .await;
    let report = client
        .maintenance()
        .run_maintenance(&RETENTION)
        .await
        .expect("pass");
    assert_eq!(report.workers_removed, 1);
    let left: Vec<String> = client
        .operations()
        .workers()
        .await
        .expect("list")
        .into_iter()
        .map(|w| w.id)
        .collect();
    assert_eq!(left, ["alive"]);
}

#[tokio::test]
async fn a_registration_without_a_name_is_refused_before_anything_is_written() {
    let client = common::client().await;
    let mut nameless = worker("x", Duration::from_secs(30));
    nameless.name = String::new();
    let err = client
        .worker_store()
        .heartbeat(&nameless)
        .await
        .expect_err("empty host");
    assert!(err.to_string().contains("worker name"), "{err}");
    assert!(client
        .operations()
        .workers()
        .await
        .expect("list")
        .is_empty());
}
