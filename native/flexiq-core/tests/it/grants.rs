//! Roles other than the owner: a producer enqueues and reads, a worker runs jobs, and each is
//! refused what the other (or only the owner) may do. PUBLIC's EXECUTE on the schema's
//! functions is revoked first, as hardened databases do, so the grants must name what they need.

use crate::common;

use std::time::Duration;

use flexiq_core::{Attempt, Client, ClientConfig, Error, Grant, JobRequest, Outcome};

const LEASE: Duration = Duration::from_secs(30);

fn job(n: i64) -> JobRequest {
    JobRequest::new("t", format!("[{n}]").into_bytes())
}

/// A schema whose functions PUBLIC may not execute, with a LOGIN role granted `grant` on it;
/// its owner's client, a client connected as the role, and the role's URL.
async fn restricted(grant: Grant) -> (Client, Client, String) {
    let owner = common::client().await;
    common::execute(
        &owner,
        "REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA {schema} FROM PUBLIC",
    )
    .await;
    // Mixed case and a dash: the role name must be quoted to be found at all.
    let role = format!("{}-{grant:?}", owner.schema());
    common::execute(&owner, &format!("CREATE ROLE \"{role}\" LOGIN")).await;
    owner.operations().grant(&role, grant).await.expect("grant");
    owner
        .operations()
        .grant(&role, grant)
        .await
        .expect("granting again");
    let url = common::server()
        .url()
        .replacen("postgres@", &format!("{role}@"), 1);
    let mut config = ClientConfig::new(&url);
    config.schema = owner.schema().to_owned();
    let client = Client::connect(&config).await.expect("connect as the role");
    (owner, client, url)
}

/// Runs `sql` (`{schema}` replaced) as the role of `url`; it must be refused.
async fn refused_sql(url: &str, owner: &Client, sql: &str) {
    use sqlx::Connection;
    let mut connection = sqlx::PgConnection::connect(url).await.expect("connect");
    let outcome = sqlx::raw_sql(&sql.replace("{schema}", owner.schema()))
        .execute(&mut connection)
        .await;
    let code = outcome
        .as_ref()
        .err()
        .and_then(|e| e.as_database_error()?.code());
    assert_eq!(
        code.as_deref(),
        Some("42501"),
        "{sql}: expected insufficient privilege, got {outcome:?}"
    );
}

fn refused<T: std::fmt::Debug>(what: &str, outcome: Result<T, Error>) {
    match outcome {
        Err(Error::Storage(m)) if m.contains("permission denied") => {
            assert!(
                m.contains("grantProducer(role)"),
                "{what}: names the remedy: {m}"
            );
        }
        other => panic!("{what}: expected permission denied, got {other:?}"),
    }
}

/// Enqueues `request` `times` times over, each answered as a replay of job `held`.
async fn replays(producer: &Client, request: &JobRequest, held: i64, times: usize) {
    for _ in 0..times {
        let replay = producer.producer().enqueue(request).await.expect("replay");
        assert_eq!((replay.job_id, replay.outcome), (held, Outcome::Replayed));
    }
}

fn claim_tasks() -> (Vec<String>, Vec<String>) {
    (vec!["default".to_string()], vec!["t".to_string()])
}

#[tokio::test]
async fn a_producer_enqueues_and_reads_jobs_and_changes_or_deletes_none() {
    let (owner, producer, url) = restricted(Grant::Producer).await;
    let unkeyed = common::accepted(&producer, &job(1)).await;
    let keyed = producer
        .producer()
        .enqueue(&job(2).with_key("k"))
        .await
        .expect("keyed");
    assert_eq!(keyed.outcome, Outcome::Accepted);
    replays(&producer, &job(2).with_key("k"), keyed.job_id, 1).await;
    let bulk = producer
        .producer()
        .enqueue_many(&[job(3), job(4).with_key("k4"), job(2).with_key("k")])
        .await
        .expect("bulk");
    assert_eq!(bulk[2].job_id, keyed.job_id);

    // A key whose retention window has closed is released by the producer's next enqueue.
    let mut retained = job(5).with_key("retained");
    retained.key_retention_ms = Some(300);
    let first = common::accepted(&producer, &retained).await;
    assert!(owner
        .operations()
        .mark_completed(first)
        .await
        .expect("complete"));
    // The window closes by the server's clock, as the enqueue below judges it.
    common::until_sql(
        &owner,
        &format!("SELECT held_until <= now() FROM {{schema}}.jobs WHERE id = {first}"),
    )
    .await;
    // Replays in a row, so that the next call is first looked up by a read of its key's holder
    // (which a producer may make), and that read must not replay a closed retention.
    replays(&producer, &job(2).with_key("k"), keyed.job_id, 20).await;
    let second = producer
        .producer()
        .enqueue(&retained)
        .await
        .expect("after retention");
    assert_eq!(second.outcome, Outcome::Accepted);
    assert_ne!(second.job_id, first);

    assert!(producer
        .operations()
        .get_job(unkeyed)
        .await
        .expect("read")
        .is_some());
    // A producer's process declares its schedules and renews them before each tick.
    let nightly = flexiq_core::ScheduleDeclaration {
        name: "nightly".into(),
        cron: "0 2 * * *".into(),
        zone: "UTC".into(),
        task: "t".into(),
        queue: "default".into(),
        trigger: Some((b"{}".to_vec(), "{}".into())),
    };
    for _ in 0..2 {
        assert!(!producer
            .operations()
            .declare_schedule(&nightly)
            .await
            .expect("declare as a producer"));
    }
    let (queues, tasks) = claim_tasks();
    refused(
        "claim",
        producer
            .worker_store()
            .claim(&queues, &tasks, 10, LEASE, 1)
            .await,
    );
    refused("cancel", producer.operations().cancel(unkeyed).await);
    refused(
        "mark completed",
        producer.operations().mark_completed(unkeyed).await,
    );
    refused("purge", producer.operations().purge(unkeyed).await);
    refused("rescue", producer.worker_store().rescue_expired().await);
    refused_sql(&url, &owner, "DELETE FROM {schema}.jobs").await;
    refused_sql(&url, &owner, "UPDATE {schema}.jobs SET state = 'cancelled'").await;
    refused_sql(&url, &owner, "TRUNCATE {schema}.jobs").await;
    assert_eq!(common::job_count(&owner).await, 6);
}

#[tokio::test]
async fn a_worker_runs_jobs_through_retries_and_checkpoints_and_deletes_none() {
    let (owner, worker, url) = restricted(Grant::Worker).await;
    let registration = flexiq_core::Registration {
        id: "w1".into(),
        name: "flexiq-worker-1".into(),
        queues: vec!["default".into()],
        tasks: vec!["t".into()],
        concurrency: 1,
        lease: LEASE,
        started_at_us: 0,
    };
    let store = worker.worker_store();
    store.heartbeat(&registration).await.expect("register");
    store.heartbeat(&registration).await.expect("heartbeat");
    store.deregister("w1").await.expect("deregister");
    let mut request = job(1).with_key("w");
    request.retry.initial_ms = 0;
    request.retry.max_ms = 0;
    let id = common::accepted(&owner, &request).await;
    let (queues, tasks) = claim_tasks();

    let first = worker
        .worker_store()
        .claim(&queues, &tasks, 10, LEASE, 1)
        .await
        .expect("claim");
    let attempt = Attempt {
        job_id: id,
        attempt: first[0].attempt,
    };
    assert_eq!(
        worker
            .worker_store()
            .extend_leases(&[attempt], LEASE)
            .await
            .expect("extend"),
        [attempt]
    );
    assert!(worker
        .worker_store()
        .save_checkpoint(attempt, "stage", b"done")
        .await
        .expect("checkpoint"));
    assert!(worker
        .worker_store()
        .save_checkpoint(attempt, "stage", b"done again")
        .await
        .expect("checkpoint over"));
    let failed = worker
        .worker_store()
        .fail(attempt, "boom")
        .await
        .expect("fail");
    assert_eq!(failed.map(|f| f.state), Some("retryable".to_string()));

    let second = worker
        .worker_store()
        .claim(&queues, &tasks, 10, LEASE, 1)
        .await
        .expect("claim again");
    let attempt = Attempt {
        job_id: id,
        attempt: second[0].attempt,
    };
    assert_eq!(
        worker
            .worker_store()
            .checkpoint(id, "stage")
            .await
            .expect("read"),
        Some(b"done again".to_vec())
    );
    assert_eq!(
        worker
            .worker_store()
            .complete(&[attempt])
            .await
            .expect("complete"),
        [flexiq_core::Completed {
            attempt,
            late: false
        }]
    );
    let done = owner
        .operations()
        .get_job(id)
        .await
        .expect("read")
        .expect("job");
    assert_eq!(
        (done.state.as_str(), done.attempt, done.key_held),
        ("completed", 2, false)
    );

    let other = common::accepted(&owner, &job(2)).await;
    let claimed = worker
        .worker_store()
        .claim(&queues, &tasks, 10, LEASE, 1)
        .await
        .expect("claim");
    let back = Attempt {
        job_id: other,
        attempt: claimed[0].attempt,
    };
    assert_eq!(
        worker
            .worker_store()
            .return_attempts(&[back])
            .await
            .expect("give back"),
        [back]
    );
    worker
        .worker_store()
        .rescue_expired()
        .await
        .expect("rescue");

    refused("purge", worker.operations().purge(id).await);
    refused("enqueue", worker.producer().enqueue(&job(3)).await);
    refused_sql(&url, &owner, "DELETE FROM {schema}.jobs").await;
    refused_sql(&url, &owner, "DELETE FROM {schema}.checkpoints").await;
    refused_sql(&url, &owner, "TRUNCATE {schema}.jobs").await;
    refused_sql(&url, &owner, "UPDATE {schema}.jobs SET payload = ''").await;
    refused_sql(&url, &owner, "DROP TABLE {schema}.checkpoints").await;
    assert_eq!(common::job_count(&owner).await, 2);
}

/// Each function's name and privileges, PUBLIC's revoked EXECUTE included.
const FUNCTION_PRIVILEGES: &str =
    "SELECT string_agg(p.proname || '=' || coalesce(p.proacl::text, 'default'), ' '
                   ORDER BY p.proname)
  FROM pg_proc p WHERE p.pronamespace = '{schema}'::regnamespace";

/// Applies every definition again, as an upgrade that changed them all would.
async fn apply_definitions_again(owner: &Client) {
    let privileges = common::text(owner, FUNCTION_PRIVILEGES).await;
    common::execute(owner, "DELETE FROM {schema}.schema_definitions").await;
    assert_eq!(
        owner.migrate().await.expect("migrate"),
        flexiq_core::schema::definition_count()
    );
    assert_eq!(common::text(owner, FUNCTION_PRIVILEGES).await, privileges);
}

#[tokio::test]
async fn roles_keep_their_privileges_when_definitions_are_applied_again() {
    let (owner, producer, _) = restricted(Grant::Producer).await;
    apply_definitions_again(&owner).await;
    let keyed = producer
        .producer()
        .enqueue(&job(1).with_key("k"))
        .await
        .expect("keyed");
    replays(&producer, &job(1).with_key("k"), keyed.job_id, 1).await;

    let (owner, worker, _) = restricted(Grant::Worker).await;
    apply_definitions_again(&owner).await;
    let id = common::accepted(&owner, &job(2)).await;
    let (queues, tasks) = claim_tasks();
    let claimed = worker
        .worker_store()
        .claim(&queues, &tasks, 10, LEASE, 1)
        .await
        .expect("claim");
    let back = Attempt {
        job_id: id,
        attempt: claimed[0].attempt,
    };
    assert_eq!(
        worker
            .worker_store()
            .return_attempts(&[back])
            .await
            .expect("give back"),
        [back]
    );
}

#[tokio::test]
async fn a_role_name_is_quoted_never_spliced_into_the_grant() {
    let owner = common::client().await;
    let hostile = format!("x\"; DROP TABLE {}.jobs; --", owner.schema());
    match owner.operations().grant(&hostile, Grant::Producer).await {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("does not exist"), "{m}"),
        other => panic!("expected an unknown role, got {other:?}"),
    }
    assert_eq!(
        common::job_count(&owner).await,
        0,
        "the jobs table is there"
    );
}

#[tokio::test]
async fn a_worker_granted_before_late_outcomes_were_kept_claims_and_rescues_after_the_upgrade() {
    let (owner, _, url) = restricted(Grant::Worker).await;
    // The schema as version 8 left it: without the columns of version 9, and the role with
    // the worker's privileges of then.
    common::execute(
        &owner,
        "ALTER TABLE {schema}.jobs DROP COLUMN rescued_attempt, DROP COLUMN lease_ms",
    )
    .await;
    common::execute(
        &owner,
        "DELETE FROM {schema}.schema_migrations WHERE version = 9",
    )
    .await;
    let mut config = ClientConfig::new(common::server().url());
    config.schema = owner.schema().to_owned();
    config.migrate = true;
    Client::connect(&config).await.expect("upgrade");
    let mut config = ClientConfig::new(&url);
    config.schema = owner.schema().to_owned();
    let worker = Client::connect(&config).await.expect("connect as the role");

    let id = common::accepted(&owner, &job(1)).await;
    let (queues, tasks) = claim_tasks();
    let claimed = worker
        .worker_store()
        .claim(&queues, &tasks, 10, Duration::from_millis(1), 1)
        .await
        .expect("claim");
    assert_eq!(claimed.iter().map(|j| j.id).collect::<Vec<_>>(), [id]);
    common::until_sql(
        &owner,
        &format!("SELECT lease_expires_at < now() FROM {{schema}}.jobs WHERE id = {id}"),
    )
    .await;
    let rescued = worker
        .worker_store()
        .rescue_expired()
        .await
        .expect("rescue");
    assert_eq!(rescued.iter().map(|r| r.id).collect::<Vec<_>>(), [id]);
}
