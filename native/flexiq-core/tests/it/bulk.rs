//! Bulk actions: every job a filter selects is cancelled, purged or redriven in batches; the
//! jobs outside the filter are left; running an action twice changes nothing the first did not;
//! actions that do not fit the filter's state are refused before anything is written.

use crate::common;

use flexiq_core::{BulkAction, Client, JobFilter, JobRequest};

fn job(queue: &str, task: &str) -> JobRequest {
    let mut request = JobRequest::new(task, b"{}".to_vec());
    request.queue = queue.into();
    request
}

async fn enqueue(client: &Client, queue: &str, task: &str, n: usize) {
    for _ in 0..n {
        client
            .producer()
            .enqueue(&job(queue, task))
            .await
            .expect("enqueue");
    }
}

fn filter(state: &str) -> JobFilter {
    JobFilter {
        state: state.into(),
        queue: None,
        task: None,
        created_from_us: None,
        created_before_us: None,
    }
}

async fn count(client: &Client, condition: &str) -> i64 {
    common::scalar(
        client,
        &format!("SELECT count(*) FROM {{schema}}.jobs WHERE {condition}"),
    )
    .await
}

#[tokio::test]
async fn a_bulk_cancel_takes_the_pending_jobs_of_its_filter_and_no_others() {
    let client = common::client().await;
    enqueue(&client, "mail", "send", 1_203).await;
    enqueue(&client, "mail", "render", 7).await;
    enqueue(&client, "sms", "send", 5).await;
    let mut mail_sends = filter("available");
    mail_sends.queue = Some("mail".into());
    mail_sends.task = Some("send".into());
    let ops = client.operations();
    assert_eq!(ops.count_matching(&mail_sends).await.expect("count"), 1_203);

    let outcome = ops
        .bulk(&BulkAction::Cancel, &mail_sends)
        .await
        .expect("cancel");
    assert_eq!(
        (outcome.selected, outcome.changed, outcome.batches),
        (1_203, 1_203, 2)
    );
    assert_eq!(count(&client, "state = 'cancelled'").await, 1_203);
    assert_eq!(
        count(&client, "state = 'available'").await,
        12,
        "other tasks and queues left"
    );

    let again = ops
        .bulk(&BulkAction::Cancel, &mail_sends)
        .await
        .expect("again");
    assert_eq!(
        (again.selected, again.changed),
        (0, 0),
        "a double submit changes nothing"
    );
}

#[tokio::test]
async fn a_bulk_purge_keeps_to_its_time_range() {
    let client = common::client().await;
    enqueue(&client, "default", "send", 30).await;
    common::execute(
        &client,
        "UPDATE {schema}.jobs SET state = 'dead', finished_at = now(),
                created_at = CASE WHEN id % 3 = 0 THEN timestamptz '2026-01-01 10:30Z'
                                  ELSE timestamptz '2026-01-02 00:00Z' END",
    )
    .await;
    let mut incident = filter("dead");
    // 2026-01-01 10:00 to 11:00 UTC.
    incident.created_from_us = Some(1_767_261_600_000_000);
    incident.created_before_us = Some(1_767_265_200_000_000);
    let ops = client.operations();
    assert_eq!(ops.count_matching(&incident).await.expect("count"), 10);
    let outcome = ops
        .bulk(&BulkAction::Purge, &incident)
        .await
        .expect("purge");
    assert_eq!((outcome.selected, outcome.changed), (10, 10));
    assert_eq!(count(&client, "true").await, 20);
    assert_eq!(count(&client, "id % 3 = 0").await, 0);
}

#[tokio::test]
async fn a_bulk_redrive_redrives_each_dead_job_once_under_its_key() {
    let client = common::client().await;
    enqueue(&client, "default", "send", 120).await;
    // A dead job whose key a newer active job holds stays dead, as a single redrive leaves it.
    let keyed = job("default", "send").with_key("order-7");
    let old = common::accepted(&client, &keyed).await;
    common::execute(
        &client,
        "UPDATE {schema}.jobs SET state = 'dead', finished_at = now()",
    )
    .await;
    let holder = common::accepted(&client, &keyed).await;
    assert_ne!(holder, old);

    let ops = client.operations();
    let dead = filter("dead");
    assert_eq!(ops.count_matching(&dead).await.expect("count"), 121);
    let redrive = BulkAction::Redrive {
        key: "incident-42".into(),
    };
    let outcome = ops.bulk(&redrive, &dead).await.expect("redrive");
    assert_eq!(
        (outcome.selected, outcome.changed, outcome.batches),
        (121, 120, 3)
    );
    assert_eq!(
        count(&client, "state = 'available' AND attempt = 0").await,
        121
    );
    assert_eq!(
        count(&client, &format!("id = {old} AND state = 'dead'")).await,
        1
    );

    // Dead again (their runs failed): the same bulk redrive, submitted twice, changes nothing;
    // another key redrives them again.
    common::execute(
        &client,
        &format!(
            "UPDATE {{schema}}.jobs SET state = 'dead', finished_at = now() WHERE id <> {holder}"
        ),
    )
    .await;
    let twice = ops.bulk(&redrive, &dead).await.expect("twice");
    assert_eq!((twice.selected, twice.changed), (121, 0));
    let next = BulkAction::Redrive {
        key: "incident-43".into(),
    };
    assert_eq!(ops.bulk(&next, &dead).await.expect("next").changed, 120);
}

#[tokio::test]
async fn an_action_that_does_not_fit_its_filter_is_refused_before_anything_is_written() {
    let client = common::client().await;
    enqueue(&client, "default", "send", 3).await;
    let ops = client.operations();
    let refusals = [
        (
            BulkAction::Cancel,
            filter("dead"),
            "applies to available, scheduled or retryable",
        ),
        (
            BulkAction::Redrive { key: "k".into() },
            filter("available"),
            "applies to dead",
        ),
        (BulkAction::Purge, filter("running"), "but running"),
        (BulkAction::Purge, filter("lost"), "must be one of"),
    ];
    for (action, f, says) in refusals {
        let err = ops.bulk(&action, &f).await.expect_err(says);
        assert!(err.to_string().contains(says), "{err}");
    }
    let mut empty = filter("available");
    empty.created_from_us = Some(10);
    empty.created_before_us = Some(10);
    let err = ops.count_matching(&empty).await.expect_err("empty range");
    assert!(err.to_string().contains("time range is empty"), "{err}");
    assert_eq!(count(&client, "state = 'available'").await, 3);
}
