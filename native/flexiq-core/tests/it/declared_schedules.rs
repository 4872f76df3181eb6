//! Declared schedules: a declaration is listed and renewed, a pause holds across renewals and
//! the renewal says so, and a trigger enqueues the declared payload and options once per key.

use crate::common;

use flexiq_core::ScheduleDeclaration;

fn nightly(trigger: bool) -> ScheduleDeclaration {
    ScheduleDeclaration {
        name: "nightly-report".into(),
        cron: "0 2 * * *".into(),
        zone: "Europe/Berlin".into(),
        task: "build_report".into(),
        queue: "reports".into(),
        trigger: trigger.then(|| {
            (
                br#"{"kind":"nightly"}"#.to_vec(),
                r#"{"priority":5,"maxAttempts":3}"#.to_string(),
            )
        }),
    }
}

#[tokio::test]
async fn a_declared_schedule_is_listed_and_a_pause_holds_across_its_renewals() {
    let client = common::client().await;
    let ops = client.operations();
    assert!(!ops.declare_schedule(&nightly(true)).await.expect("declare"));
    let listed = ops.schedules().await.expect("list");
    assert_eq!(listed.len(), 1);
    let s = &listed[0];
    assert_eq!(
        (
            s.name.as_str(),
            s.cron.as_str(),
            s.zone.as_str(),
            s.task.as_str(),
            s.queue.as_str()
        ),
        (
            "nightly-report",
            "0 2 * * *",
            "Europe/Berlin",
            "build_report",
            "reports"
        )
    );
    assert!(s.triggerable);
    assert_eq!(s.paused_at_us, None);

    assert!(ops
        .pause_schedule("nightly-report", true)
        .await
        .expect("pause"));
    assert!(!ops
        .pause_schedule("nightly-report", true)
        .await
        .expect("again"));
    assert!(
        ops.declare_schedule(&nightly(true)).await.expect("renew"),
        "the renewal says paused"
    );
    assert!(ops.schedules().await.expect("list")[0]
        .paused_at_us
        .is_some());
    assert!(ops
        .pause_schedule("nightly-report", false)
        .await
        .expect("resume"));
    assert!(!ops.declare_schedule(&nightly(true)).await.expect("renew"));
    assert!(!ops
        .pause_schedule("nobody", true)
        .await
        .expect("no such schedule"));
}

#[tokio::test]
async fn a_trigger_enqueues_the_declared_job_once_per_key() {
    let client = common::client().await;
    let ops = client.operations();
    ops.declare_schedule(&nightly(true)).await.expect("declare");
    let (job, outcome) = ops
        .trigger_schedule("nightly-report", "tick-key-1", 3_600_000)
        .await
        .expect("trigger")
        .expect("triggerable");
    assert_eq!(outcome, "accepted");
    let info = ops.get_job(job).await.expect("get").expect("job");
    assert_eq!(
        (
            info.task.as_str(),
            info.queue.as_str(),
            info.priority,
            info.max_attempts
        ),
        ("build_report", "reports", 5, 3)
    );
    assert_eq!(info.key_scope.as_deref(), Some("flexiq.schedule"));
    let (again, outcome) = ops
        .trigger_schedule("nightly-report", "tick-key-1", 3_600_000)
        .await
        .expect("trigger again")
        .expect("triggerable");
    assert_eq!((again, outcome.as_str()), (job, "replayed"));

    assert_eq!(
        ops.trigger_schedule("nobody", "tick-key-2", 1_000)
            .await
            .expect("no such schedule"),
        None
    );
    ops.declare_schedule(&nightly(false))
        .await
        .expect("redeclare without a trigger");
    assert!(!ops.schedules().await.expect("list")[0].triggerable);
    assert_eq!(
        ops.trigger_schedule("nightly-report", "tick-key-3", 1_000)
            .await
            .expect("not triggerable"),
        None
    );
}
