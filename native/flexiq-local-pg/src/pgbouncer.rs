//! A private PgBouncer in front of a [`LocalPostgres`](crate::LocalPostgres), for tests of what
//! clients do behind a connection pooler: the machine's `pgbouncer` (Debian's package, or the
//! one `FLEXIQ_PGBOUNCER` names), in its own directory, on a free loopback port, in the pool
//! mode asked for. PgBouncer refuses to run as root, so as root it runs as the `postgres` OS
//! user, as the server does.

use std::fs;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::{create_unique_dir, free_port, io_err, read_log_tail, Error, PG_USER};

/// How PgBouncer hands server sessions to its clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolMode {
    /// A client keeps one server session until it disconnects.
    Session,
    /// A client gets a server session for one transaction at a time.
    Transaction,
}

impl PoolMode {
    fn name(self) -> &'static str {
        match self {
            PoolMode::Session => "session",
            PoolMode::Transaction => "transaction",
        }
    }
}

/// A running PgBouncer; stopped and its directory deleted when dropped.
#[derive(Debug)]
pub struct LocalPgBouncer {
    root: PathBuf,
    port: u16,
    child: Child,
}

impl LocalPgBouncer {
    /// Starts PgBouncer in `mode` in front of the server on `server_port`, with at most
    /// `server_connections` server sessions per database and user; every client logs in as the
    /// server's superuser. Blocks until it accepts TCP connections.
    pub fn start(
        server_port: u16,
        mode: PoolMode,
        server_connections: u32,
    ) -> Result<LocalPgBouncer, Error> {
        let root = create_unique_dir()?;
        let port = free_port()?;
        let ini = root.join("pgbouncer.ini");
        let log = root.join("pgbouncer.log");
        let config = format!(
            "[databases]\n\
             * = host=127.0.0.1 port={server_port} user={PG_USER}\n\
             [pgbouncer]\n\
             listen_addr = 127.0.0.1\n\
             listen_port = {port}\n\
             unix_socket_dir =\n\
             auth_type = any\n\
             pool_mode = {mode}\n\
             default_pool_size = {server_connections}\n\
             max_client_conn = 1000\n\
             logfile = {log}\n\
             pidfile = {pid}\n",
            mode = mode.name(),
            log = log.display(),
            pid = root.join("pgbouncer.pid").display(),
        );
        fs::write(&ini, config).map_err(io_err("write", &ini))?;
        let binary = std::env::var_os("FLEXIQ_PGBOUNCER")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/usr/sbin/pgbouncer"));
        let as_pg_user = fs::metadata(&root).map(|m| m.uid() == 0).unwrap_or(false);
        let mut cmd = if as_pg_user {
            let mut chown = Command::new("chown");
            chown
                .arg("-R")
                .arg(format!("{PG_USER}:{PG_USER}"))
                .arg(&root);
            crate::run_checked(&mut chown)?;
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", PG_USER, "--"]).arg(&binary);
            cmd
        } else {
            Command::new(&binary)
        };
        cmd.arg(&ini)
            .current_dir(&root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = cmd.spawn().map_err(|source| Error::Spawn {
            command: format!("{} {}", binary.display(), ini.display()),
            source,
        })?;
        let mut bouncer = LocalPgBouncer { root, port, child };
        bouncer.wait_for_tcp(&log)?;
        bouncer.spawn_watchdog()?;
        Ok(bouncer)
    }

    /// A URL of the server's superuser through PgBouncer.
    pub fn url(&self) -> String {
        format!("postgres://{PG_USER}@127.0.0.1:{}/postgres", self.port)
    }

    /// The loopback TCP port PgBouncer listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A small shell process that stops PgBouncer once this process has exited by any means,
    /// as the server's watchdog does.
    fn spawn_watchdog(&self) -> Result<(), Error> {
        const SCRIPT: &str = r#"while kill -0 "$1" 2>/dev/null; do sleep 1; done
kill "$(cat "$2")" 2>/dev/null; rm -rf "$3""#;
        Command::new("sh")
            .arg("-c")
            .arg(SCRIPT)
            .arg("sh")
            .arg(std::process::id().to_string())
            .arg(self.root.join("pgbouncer.pid"))
            .arg(&self.root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map(drop)
            .map_err(|source| Error::Spawn {
                command: "sh (PgBouncer's watchdog)".into(),
                source,
            })
    }

    fn wait_for_tcp(&mut self, log: &std::path::Path) -> Result<(), Error> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let started = Instant::now();
        loop {
            match TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
                Ok(_) => return Ok(()),
                Err(source) if started.elapsed() >= Duration::from_secs(10) => {
                    return Err(Error::NotReachable {
                        port: self.port,
                        waited: started.elapsed(),
                        source,
                        log: log.to_path_buf(),
                        log_tail: read_log_tail(log, 0),
                    })
                }
                Err(_) => thread::sleep(Duration::from_millis(50)),
            }
        }
    }
}

impl Drop for LocalPgBouncer {
    fn drop(&mut self) {
        // PgBouncer itself, which runuser may have started as a child of its own.
        let _ = Command::new("sh")
            .arg("-c")
            .arg(r#"kill "$(cat "$1")" 2>/dev/null"#)
            .arg("sh")
            .arg(self.root.join("pgbouncer.pid"))
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.root);
    }
}
