//! Credentials that change: a password supplier is asked at every new connection, so that a
//! password rotated on the server while the client runs is used by the connections opened
//! after it, and calls running across the change complete. A wrong password fails at once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flexiq_core::server::PasswordSource;
use flexiq_core::{Client, ClientConfig, Error, JobRequest};

use crate::common;

/// The current password, as a secret store would hand it out, counting the times it was asked.
struct Rotating {
    current: Mutex<String>,
    asked: AtomicUsize,
}

impl PasswordSource for Rotating {
    fn password(&self) -> Result<String, String> {
        self.asked.fetch_add(1, Ordering::Relaxed);
        Ok(self.current.lock().expect("password").clone())
    }
}

/// A superuser that logs in with a password from TCP, ahead of the server's trust rules (md5,
/// which checks a password stored as SCRAM by SCRAM), named for this process.
async fn role_with_password(password: &str) -> String {
    let role = format!("rotating_{}", std::process::id());
    let admin = sqlx::PgPool::connect(&common::server().url())
        .await
        .expect("admin");
    sqlx::query(&format!(
        "CREATE ROLE {role} SUPERUSER LOGIN PASSWORD '{password}'"
    ))
    .execute(&admin)
    .await
    .expect("role");
    let hba = common::server().data_dir().join("pg_hba.conf");
    let rules = std::fs::read_to_string(&hba).expect("pg_hba.conf");
    std::fs::write(&hba, format!("host all {role} 127.0.0.1/32 md5\n{rules}"))
        .expect("pg_hba.conf");
    sqlx::query("SELECT pg_reload_conf()")
        .execute(&admin)
        .await
        .expect("reload");
    admin.close().await;
    role
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rotated_password_is_used_by_new_connections_and_nothing_in_flight_is_lost() {
    let role = role_with_password("first-secret").await;
    let source = Arc::new(Rotating {
        current: Mutex::new("first-secret".into()),
        asked: AtomicUsize::new(0),
    });
    let url = format!(
        "postgres://{role}@127.0.0.1:{}/postgres",
        common::server().port()
    );
    let mut config = ClientConfig::new(url.clone());
    config.schema = format!("rotating_{}", std::process::id());
    config.migrate = true;
    config.pool_size = 4;
    config.password = Some(source.clone());
    let client = Arc::new(
        Client::connect(&config)
            .await
            .expect("connect with the first password"),
    );
    let asked_before = source.asked.load(Ordering::Relaxed);
    assert!(asked_before > 0, "the supplier was asked");

    // Four callers enqueue without pause across the rotation.
    let stop = Arc::new(AtomicBool::new(false));
    let accepted = Arc::new(Mutex::new(Vec::new()));
    let failures = Arc::new(Mutex::new(Vec::new()));
    let mut callers = tokio::task::JoinSet::new();
    for caller in 0..4 {
        let (client, stop, accepted, failures) = (
            client.clone(),
            stop.clone(),
            accepted.clone(),
            failures.clone(),
        );
        callers.spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let request =
                    JobRequest::new("t", b"{}".to_vec()).with_key(format!("r-{caller}-{n}"));
                n += 1;
                match client.producer().enqueue(&request).await {
                    Ok(job) => accepted.lock().expect("accepted").push(job.job_id),
                    Err(e) => failures.lock().expect("failures").push(e.to_string()),
                }
            }
        });
    }
    let count = || accepted.lock().expect("accepted").len();
    common::eventually("enqueues with the first password", || async {
        count() >= 200
    })
    .await;

    // The rotation: the server takes the new password, the store hands it out, and the
    // server ends every session of the role, so that the pool must open new connections.
    let admin = sqlx::PgPool::connect(&common::server().url())
        .await
        .expect("admin");
    sqlx::query(&format!("ALTER ROLE {role} PASSWORD 'second-secret'"))
        .execute(&admin)
        .await
        .expect("rotate");
    *source.current.lock().expect("password") = "second-secret".into();
    let ended: i64 = sqlx::query_scalar(&format!(
        "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE usename = '{role}') ended"
    ))
    .fetch_one(&admin)
    .await
    .expect("end the role's sessions");
    assert!(ended > 0, "the client had sessions to end");
    let rotated_at = count();
    common::eventually("enqueues with the second password", || async {
        count() >= rotated_at + 200
    })
    .await;
    stop.store(true, Ordering::Relaxed);
    while let Some(done) = callers.join_next().await {
        done.expect("caller");
    }
    assert!(
        source.asked.load(Ordering::Relaxed) > asked_before,
        "new connections asked for the password again"
    );
    assert_eq!(*failures.lock().expect("failures"), Vec::<String>::new());
    let accepted = accepted.lock().expect("accepted").clone();
    let stored: i64 = sqlx::query_scalar(&format!(
        "SELECT count(*) FROM {}.jobs WHERE id = ANY($1)",
        client.schema()
    ))
    .bind(&accepted)
    .fetch_one(&admin)
    .await
    .expect("stored");
    assert_eq!(
        stored as usize,
        accepted.len(),
        "every accepted job is stored"
    );

    // A supplier with a wrong password fails at once, saying what to check.
    let wrong = Arc::new(Rotating {
        current: Mutex::new("first-secret".into()),
        asked: AtomicUsize::new(0),
    });
    let mut config = ClientConfig::new(url);
    config.password = Some(wrong);
    config.connect_timeout = Duration::from_secs(20);
    let started = Instant::now();
    let refused = Client::connect(&config).await.err().expect("refused");
    assert!(started.elapsed() < Duration::from_secs(10), "failed fast");
    match refused {
        Error::Storage(m) => assert!(
            m.contains("password authentication failed")
                && m.contains("check the user and password")
                && m.contains("password supplier"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    client.drop_schema().await.expect("drop");
    sqlx::query(&format!("DROP OWNED BY {role}"))
        .execute(&admin)
        .await
        .expect("drop owned");
    admin.close().await;
}
