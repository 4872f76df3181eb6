//! A failover under load: a primary and its streaming standby (two local clusters, the
//! standby copied by `pg_basebackup`), a client whose URL names both hosts with
//! `target_session_attrs=read-write`, producers and a worker running while the primary crashes
//! and the standby is promoted. The client finds the new primary by itself: producers and the
//! worker go on, wake-ups and the maintenance election follow. With a synchronous standby no
//! accepted job is lost and no completed job runs again.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flexiq_core::{Attempt, Client, ClientConfig, JobRequest, Maintained, Retention};
use flexiq_local_pg::{LocalPostgres, Options};
use sqlx::{Connection, Executor, PgConnection, Row};

use crate::common;

/// What the producers and the worker saw.
#[derive(Default)]
struct Seen {
    accepted: Vec<i64>,
    failed_calls: usize,
    completed: HashSet<i64>,
    /// Jobs claimed again after their completion was acknowledged.
    ran_again: Vec<i64>,
    promoted: Option<Instant>,
    first_after_promotion: Option<Duration>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn with_a_synchronous_standby_nothing_accepted_is_lost_and_nothing_completed_runs_again() {
    let (seen, jobs_on_new_primary) = fail_over(true).await;
    let missing = lost(&seen, &jobs_on_new_primary);
    assert!(missing.is_empty(), "accepted jobs lost: {missing:?}");
    assert!(seen.ran_again.is_empty(), "ran again: {:?}", seen.ran_again);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn with_an_asynchronous_standby_the_client_carries_on_on_the_new_primary() {
    let (seen, jobs_on_new_primary) = fail_over(false).await;
    // What an asynchronous standby had not received when the primary crashed is gone; the
    // client cannot know. Reported, not asserted: it depends on timing.
    println!(
        "asynchronous standby: {} of {} accepted jobs lost, {} completed jobs ran again",
        lost(&seen, &jobs_on_new_primary).len(),
        seen.accepted.len(),
        seen.ran_again.len()
    );
}

fn lost(seen: &Seen, jobs: &HashSet<i64>) -> Vec<i64> {
    seen.accepted
        .iter()
        .copied()
        .filter(|id| !jobs.contains(id))
        .collect()
}

/// Runs producers and a worker across a crash of the primary and the promotion of its standby;
/// returns what they saw and the ids of the jobs on the new primary, once all were drained.
async fn fail_over(synchronous: bool) -> (Seen, HashSet<i64>) {
    let mut primary = LocalPostgres::start(&Options::default()).expect("primary");
    let standby = primary.start_standby(&Options::default()).expect("standby");
    let admin = sqlx::PgPool::connect(&primary.url()).await.expect("admin");
    if synchronous {
        for statement in [
            "ALTER SYSTEM SET synchronous_standby_names = '*'",
            "SELECT pg_reload_conf()",
        ] {
            admin.execute(statement).await.expect("synchronous");
        }
    }
    let wanted = if synchronous { "sync" } else { "async" };
    let admin_ref = &admin;
    common::eventually("the standby to stream", move || async move {
        let state: Option<String> = sqlx::query_scalar(
            "SELECT sync_state FROM pg_stat_replication WHERE state = 'streaming'",
        )
        .fetch_optional(admin_ref)
        .await
        .expect("replication");
        state.as_deref() == Some(wanted)
    })
    .await;
    admin.close().await;

    let url = format!(
        "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write",
        primary.port(),
        standby.port()
    );
    let mut config = ClientConfig::new(url);
    config.schema = "failover".into();
    config.migrate = true;
    config.connect_timeout = Duration::from_secs(2);
    let client = Arc::new(
        Client::connect(&config)
            .await
            .expect("connect to the primary"),
    );

    let seen = Arc::new(Mutex::new(Seen::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut running = tokio::task::JoinSet::new();
    for producer in 0..2 {
        let (client, seen, stop) = (client.clone(), seen.clone(), stop.clone());
        running.spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let request =
                    JobRequest::new("t", b"{}".to_vec()).with_key(format!("f-{producer}-{n}"));
                let answer = client.producer().enqueue(&request).await;
                let failed = {
                    let mut seen = seen.lock().expect("seen");
                    match answer {
                        Ok(job) => {
                            n += 1;
                            seen.accepted.push(job.job_id);
                            if let (Some(at), None) = (seen.promoted, seen.first_after_promotion) {
                                seen.first_after_promotion = Some(at.elapsed());
                            }
                            false
                        }
                        // The same key again next: a replay if the failed call was stored.
                        Err(_) => {
                            seen.failed_calls += 1;
                            true
                        }
                    }
                };
                if failed {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        });
    }
    {
        let (client, seen, stop) = (client.clone(), seen.clone(), stop.clone());
        running.spawn(async move { work(&client, &seen, &stop).await });
    }

    let progress = |accepted: usize, completed: usize| {
        let seen = seen.clone();
        move || {
            let seen = seen.clone();
            async move {
                let seen = seen.lock().expect("seen");
                seen.accepted.len() >= accepted && seen.completed.len() >= completed
            }
        }
    };
    common::eventually("work before the failover", progress(300, 150)).await;
    primary.crash().expect("crash the primary");
    standby.promote().expect("promote the standby");
    let before = {
        let mut seen = seen.lock().expect("seen");
        seen.promoted = Some(Instant::now());
        seen.accepted.len()
    };
    common::eventually("enqueues on the new primary", progress(before + 300, 0)).await;
    stop.store(true, Ordering::Relaxed);
    while let Some(done) = running.join_next().await {
        done.expect("a producer or the worker");
    }
    // What is left, drained by a worker that stops once nothing is left.
    work(&client, &seen, &Arc::new(AtomicBool::new(true))).await;

    // Wake-ups and the election follow the primary.
    let wakeups = client.wakeups();
    let generation = wakeups
        .await_work(wakeups.work_generation().await, common::WITHIN)
        .await;
    client
        .producer()
        .enqueue(&JobRequest::new("t", b"{}".to_vec()).with_key("after"))
        .await
        .expect("an enqueue after the failover");
    assert_ne!(
        wakeups.await_work(generation, common::WITHIN).await,
        generation,
        "no wake-up from the new primary"
    );
    let retention = Retention {
        completed_ms: 3_600_000,
        cancelled_ms: 3_600_000,
        dead_ms: 3_600_000,
        batch_size: 1000,
    };
    let mut elected = false;
    for _ in 0..50 {
        if let Ok(Maintained::Ran(_)) = client.maintenance().maintain(&retention).await {
            elected = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(elected, "maintenance elected on the new primary");

    let mut on_standby = PgConnection::connect(&standby.url())
        .await
        .expect("new primary");
    let ids: HashSet<i64> = on_standby
        .fetch_all(format!("SELECT id FROM {}.jobs", client.schema()).as_str())
        .await
        .expect("jobs")
        .iter()
        .map(|r| r.get(0))
        .collect();
    let seen = Arc::try_unwrap(seen)
        .ok()
        .expect("no other holder")
        .into_inner()
        .expect("seen");
    println!(
        "failover ({}): {} accepted, {} calls failed, promotion to first enqueue {:?}",
        if synchronous {
            "synchronous"
        } else {
            "asynchronous"
        },
        seen.accepted.len(),
        seen.failed_calls,
        seen.first_after_promotion
    );
    (seen, ids)
}

/// Claims and completes until `stop` is set and nothing is left to claim.
async fn work(client: &Client, seen: &Mutex<Seen>, stop: &AtomicBool) {
    let queues = vec!["default".to_owned()];
    let tasks = vec!["t".to_owned()];
    loop {
        let claimed = match client
            .worker_store()
            .claim_next(&queues, &tasks, 50, Duration::from_secs(60), 1)
            .await
        {
            Ok(claimed) => claimed,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        if claimed.is_empty() {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        }
        let attempts: Vec<Attempt> = claimed
            .iter()
            .map(|j| Attempt {
                job_id: j.id,
                attempt: j.attempt,
            })
            .collect();
        {
            let mut seen = seen.lock().expect("seen");
            let again: Vec<i64> = claimed
                .iter()
                .map(|j| j.id)
                .filter(|id| seen.completed.contains(id))
                .collect();
            seen.ran_again.extend(again);
        }
        // A completion that fails is claimed again once its lease ends (60 s), or never in
        // this test: recorded as completed only when acknowledged.
        if let Ok(done) = client.worker_store().complete(&attempts).await {
            let mut seen = seen.lock().expect("seen");
            seen.completed.extend(done.iter().map(|c| c.attempt.job_id));
        }
    }
}
