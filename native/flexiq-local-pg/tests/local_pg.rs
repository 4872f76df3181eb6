//! Starts real servers with the machine's PostgreSQL binaries. Every test
//! owns its servers, so they run in parallel without interfering.

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::thread;
use std::time::Duration;

use flexiq_local_pg::{Error, LocalPostgres, Options};

fn accepts_tcp(port: u16) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok()
}

/// Asks the server itself, so the test proves the setting took effect rather
/// than merely that it was written somewhere.
fn show(pg: &LocalPostgres, setting: &str) -> String {
    let psql = pg.bin_dir().join("psql");
    let psql = if psql.is_file() {
        psql
    } else {
        PathBuf::from("psql")
    };
    let out = Command::new(&psql)
        .args([
            "-X",
            "-A",
            "-t",
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            "postgres",
        ])
        .arg("-p")
        .arg(pg.port().to_string())
        .arg("-c")
        .arg(format!("show {setting}"))
        .output()
        .expect("run psql");
    assert!(
        out.status.success(),
        "psql failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn root_dir(pg: &LocalPostgres) -> PathBuf {
    pg.data_dir().parent().unwrap().to_path_buf()
}

#[test]
fn two_servers_run_side_by_side_and_clean_up() {
    let durable = Options {
        durable: true,
        settings: vec![("work_mem".into(), "5MB".into())],
        ..Options::default()
    };
    let fast = Options {
        durable: false,
        settings: vec![("work_mem".into(), "7MB".into())],
        ..Options::default()
    };
    // Start both at once from separate threads: this is how parallel tests use it.
    let (a, b) = thread::scope(|s| {
        let a = s.spawn(|| LocalPostgres::start(&durable));
        let b = s.spawn(|| LocalPostgres::start(&fast));
        (a.join().unwrap(), b.join().unwrap())
    });
    let a = a.unwrap_or_else(|e| panic!("durable server: {e}"));
    let b = b.unwrap_or_else(|e| panic!("fast server: {e}"));

    assert_ne!(a.port(), b.port());
    assert_ne!(a.data_dir(), b.data_dir());
    for pg in [&a, &b] {
        assert!(accepts_tcp(pg.port()), "{} not reachable", pg.url());
        assert_eq!(
            pg.url(),
            format!("postgres://postgres@127.0.0.1:{}/postgres", pg.port())
        );
        let log_len = std::fs::metadata(pg.log_file()).expect("log file").len();
        assert!(log_len > 0, "log {} is empty", pg.log_file().display());
        assert_eq!(show(pg, "max_connections"), "200");
    }

    assert_eq!(show(&a, "work_mem"), "5MB");
    assert_eq!(show(&a, "fsync"), "on");
    assert_eq!(show(&a, "synchronous_commit"), "on");
    assert_eq!(show(&b, "work_mem"), "7MB");
    assert_eq!(show(&b, "fsync"), "off");
    assert_eq!(show(&b, "synchronous_commit"), "off");
    assert_eq!(show(&b, "full_page_writes"), "off");

    let (a_dir, a_port) = (root_dir(&a), a.port());
    let (b_dir, b_port) = (root_dir(&b), b.port());

    a.stop().expect("stop");
    assert!(!a_dir.exists(), "{} left behind", a_dir.display());
    assert!(!accepts_tcp(a_port), "port {a_port} still open after stop");
    // Stopping one must not disturb the other.
    assert!(accepts_tcp(b_port));

    drop(b);
    assert!(!b_dir.exists(), "{} left behind", b_dir.display());
    assert!(!accepts_tcp(b_port), "port {b_port} still open after drop");
}

#[test]
fn awkward_values_are_quoted() {
    let value = r"it's a \ test";
    let options = Options {
        durable: false,
        // cluster_name is server-wide and takes free text.
        settings: vec![("cluster_name".into(), value.into())],
        ..Options::default()
    };
    let pg = LocalPostgres::start(&options).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(show(&pg, "cluster_name"), value);
    pg.stop().unwrap();
}

#[test]
fn failed_start_explains_itself_and_cleans_up() {
    let options = Options {
        durable: false,
        settings: vec![("work_mem".into(), "banana".into())],
        ..Options::default()
    };
    let err = LocalPostgres::start(&options).expect_err("bogus work_mem must fail");
    assert!(matches!(err, Error::Start { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("pg_ctl"), "{message}");
    // The server log's complaint is quoted in the error.
    assert!(message.contains("banana"), "{message}");
    if let Error::Start { log, .. } = &err {
        let root = log.parent().unwrap();
        assert!(!root.exists(), "{} left behind", root.display());
    }
}

#[test]
fn reserved_and_malformed_settings_are_refused() {
    for name in ["port", "listen_addresses", "work_mem = 1"] {
        let options = Options {
            durable: false,
            settings: vec![(name.into(), "1".into())],
            ..Options::default()
        };
        let err = LocalPostgres::start(&options).expect_err(name);
        assert!(matches!(err, Error::InvalidSetting { .. }), "{err:?}");
    }
}

#[test]
fn defaults_are_durable() {
    let options = Options::default();
    assert!(options.durable);
    assert!(options.settings.is_empty());
}
