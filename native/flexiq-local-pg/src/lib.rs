//! A private, throwaway PostgreSQL server for tests, the demo and benchmarks.
//!
//! [`LocalPostgres::start`] builds a fresh cluster in its own temporary
//! directory with the machine's PostgreSQL binaries, starts it on a free
//! loopback port, and hands back a URL. [`LocalPostgres::stop`] (or dropping
//! the value) shuts the server down and deletes the directory, so nothing
//! outlives the test that asked for it.
//!
//! `initdb` refuses to run as root, and CI runs as root, so when the effective
//! user is root every server command runs as the `postgres` OS user through
//! `runuser` and the directory is handed to that user.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs;
use std::io::{self, Read, Seek, SeekFrom, Write as _};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

mod pgbouncer;
pub use pgbouncer::{LocalPgBouncer, PoolMode};

/// Both the OS user the server runs as when we are root and the database
/// superuser created by initdb; using one name keeps the URL predictable.
pub(crate) const PG_USER: &str = "postgres";

/// Our settings live in their own file, included from `postgresql.conf`, so a
/// retry on a new port can simply rewrite it instead of piling up lines.
const CONF_FILE: &str = "flexiq-local-pg.conf";

/// A port picked by binding to port 0 can be grabbed by someone else before
/// the server binds it; a few fresh picks make that race practically moot.
const START_ATTEMPTS: usize = 3;

/// How long `pg_ctl` may wait for start and stop; generous because CI
/// machines (2 cores) can be slow while several servers start at once.
const PG_CTL_TIMEOUT_SECS: &str = "60";

/// How long to keep trying a TCP connect after `pg_ctl` reported the server up.
const TCP_READY_TIMEOUT: Duration = Duration::from_secs(10);

/// How much of the server log to quote in errors: enough for the fatal
/// message and its context, not so much that it drowns the test output.
const LOG_TAIL_BYTES: usize = 4096;

/// Settings this crate must control itself: the URL and the readiness check
/// depend on them, so letting a caller override them would only break things.
const RESERVED_SETTINGS: &[&str] = &["port", "listen_addresses", "unix_socket_directories"];

/// Makes directory names unique between servers started by one process, even
/// from several threads in the same nanosecond.
static DIR_COUNTER: AtomicU64 = AtomicU64::new(0);

/// How to configure the server.
#[derive(Debug, Clone)]
pub struct Options {
    /// Keep PostgreSQL's crash-safe defaults (fsync, synchronous_commit, full
    /// page writes). Set it to `false` for fast tests that never need to
    /// survive a crash; benchmarks should keep it `true` to measure reality.
    pub durable: bool,
    /// Extra server settings as `(name, value)`, applied after this crate's
    /// own so they win. Values are quoted for you and may contain anything
    /// but NUL. `port`, `listen_addresses` and `unix_socket_directories` are
    /// refused because the crate relies on them.
    pub settings: Vec<(String, String)>,
    /// Serve TLS (`ssl = on`) with these files; `None` leaves TLS off.
    pub tls: Option<ServerTls>,
}

impl Default for Options {
    /// Durable, without TLS and without extra settings: the safe choice unless
    /// a test explicitly asks for speed.
    fn default() -> Self {
        Options {
            durable: true,
            settings: Vec::new(),
            tls: None,
        }
    }
}

/// The PEM files a server offers TLS with. They are copied into the data
/// directory, readable only by the server's OS user, as PostgreSQL demands of
/// its key; the originals may sit anywhere this process can read.
#[derive(Debug, Clone)]
pub struct ServerTls {
    /// The server's certificate.
    pub certificate: PathBuf,
    /// Its private key.
    pub key: PathBuf,
    /// CA certificates for client certificates (`ssl_ca_file`): the server
    /// then asks clients for a certificate and checks any it is given. With
    /// trust authentication a client without one is still let in.
    pub client_ca: Option<PathBuf>,
}

/// Where the TLS files go, inside the data directory.
const TLS_CERTIFICATE: &str = "server.crt";
const TLS_KEY: &str = "server.key";
const TLS_CLIENT_CA: &str = "client-ca.crt";

/// Why a server could not be started or stopped. Messages name the command
/// that was run and what it printed, so a failing test explains itself.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No directory with `initdb`, `pg_ctl` and `postgres` was found.
    #[error(
        "no PostgreSQL server binaries (initdb, pg_ctl, postgres) found; looked in: {}; \
         set FLEXIQ_PG_BIN to the directory holding them",
        looked.join("; ")
    )]
    BinariesNotFound {
        /// Every place that was searched, with why it did not qualify.
        looked: Vec<String>,
    },

    /// An entry of [`Options::settings`] cannot be written safely.
    #[error("invalid setting `{name}`: {reason}")]
    InvalidSetting {
        /// The setting's name as given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A file system operation on the server's directory failed.
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        /// What was being attempted, e.g. "create directory".
        action: &'static str,
        /// The path it was attempted on.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },

    /// A command could not be launched at all (missing binary, no permission).
    #[error("could not run `{command}`: {source}")]
    Spawn {
        /// The command line that was attempted.
        command: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },

    /// A command ran but reported failure.
    #[error("`{command}` failed ({status}); it printed:\n{output}")]
    Command {
        /// The command line that was run.
        command: String,
        /// Its exit status.
        status: String,
        /// Its stdout and stderr.
        output: String,
    },

    /// `pg_ctl start` failed; the server log usually says why.
    #[error(
        "PostgreSQL did not start: `{command}` failed ({status}); it printed:\n{output}\n\
         tail of the server log {}:\n{log_tail}",
        log.display()
    )]
    Start {
        /// The command line that was run.
        command: String,
        /// Its exit status.
        status: String,
        /// Its stdout and stderr.
        output: String,
        /// The server's log file.
        log: PathBuf,
        /// The end of what the server wrote to it during this attempt.
        log_tail: String,
    },

    /// The server reported itself ready but its TCP port did not answer.
    #[error(
        "PostgreSQL reported ready but 127.0.0.1:{port} refused TCP connections for {waited:?} \
         (last error: {source}); tail of the server log {}:\n{log_tail}",
        log.display()
    )]
    NotReachable {
        /// The port the server was told to listen on.
        port: u16,
        /// How long connecting was retried.
        waited: Duration,
        /// The last connect error.
        #[source]
        source: io::Error,
        /// The server's log file.
        log: PathBuf,
        /// The end of the server log.
        log_tail: String,
    },
}

/// A running throwaway server. Stop it with [`LocalPostgres::stop`] to see
/// errors; dropping it also stops it and deletes its files, silently.
#[derive(Debug)]
pub struct LocalPostgres {
    /// The temporary directory holding everything below; deleted at the end.
    root: PathBuf,
    data_dir: PathBuf,
    log_file: PathBuf,
    socket_dir: PathBuf,
    bin_dir: PathBuf,
    port: u16,
    /// Whether server commands go through `runuser -u postgres` (we are root).
    as_pg_user: bool,
    /// Set once `pg_ctl start` has been tried and until a stop succeeded, so
    /// that drop knows whether a server might need shutting down.
    may_be_running: bool,
    /// Set once `root` is gone, so drop doesn't try again.
    removed: bool,
}

impl LocalPostgres {
    /// Creates a new cluster in a fresh temporary directory and starts it.
    ///
    /// Blocks until the server accepts TCP connections. On failure everything
    /// created so far is stopped and deleted before the error is returned.
    pub fn start(options: &Options) -> Result<LocalPostgres, Error> {
        // Reject bad settings before spending a second on initdb.
        for (name, value) in &options.settings {
            validate_setting(name, value)?;
        }
        let bin_dir = find_bin_dir()?;
        let root = create_unique_dir()?;

        // From here on, `pg`'s drop cleans up on every early return.
        let mut pg = LocalPostgres {
            data_dir: root.join("data"),
            log_file: root.join("postgres.log"),
            // Short name: Unix socket paths are limited to about 107 bytes.
            socket_dir: root.join("sock"),
            // A directory we just created is owned by our effective uid, which
            // tells us whether we are root without needing libc.
            as_pg_user: fs::metadata(&root).map(|m| m.uid() == 0).unwrap_or(false),
            root,
            bin_dir,
            port: 0,
            may_be_running: false,
            removed: false,
        };

        fs::create_dir(&pg.socket_dir).map_err(io_err("create directory", &pg.socket_dir))?;
        if pg.as_pg_user {
            // initdb (run as postgres) creates data/ and pg_ctl creates the log
            // here, so the postgres user must own the whole directory.
            pg.give_to_pg_user(&pg.root)?;
        }

        let initdb = pg.bin_dir.join("initdb");
        let mut cmd = pg.server_command(&initdb);
        cmd.arg("-D")
            .arg(&pg.data_dir)
            .args(["-U", PG_USER, "-A", "trust", "-E", "UTF8", "--no-locale"])
            // A throwaway cluster need not be fsynced to disk by initdb.
            .arg("--no-sync");
        run_checked(&mut cmd)?;

        // Hook our own settings file into the main config once; each start
        // attempt then rewrites only that file.
        let main_conf = pg.data_dir.join("postgresql.conf");
        fs::OpenOptions::new()
            .append(true)
            .open(&main_conf)
            .and_then(|mut f| writeln!(f, "\n# Added by flexiq-local-pg.\ninclude '{CONF_FILE}'"))
            .map_err(io_err("append to", &main_conf))?;

        if let Some(tls) = &options.tls {
            pg.install_tls(tls)?;
        }

        let mut attempt = 1;
        loop {
            pg.port = free_port()?;
            pg.write_settings(options)?;
            match pg.try_start()? {
                StartOutcome::Started => break,
                StartOutcome::PortTaken(_) if attempt < START_ATTEMPTS => attempt += 1,
                StartOutcome::PortTaken(err) | StartOutcome::Failed(err) => return Err(err),
            }
        }

        pg.wait_for_tcp()?;
        pg.spawn_watchdog()?;
        Ok(pg)
    }

    /// Starts a small shell process that outlives this one: once this process has exited, by
    /// any means (a static that is never dropped, SIGKILL, a crashed JVM), it shuts the server
    /// down and deletes its directory. After a normal stop it finds nothing left to do.
    fn spawn_watchdog(&self) -> Result<(), Error> {
        const SCRIPT: &str = r#"while kill -0 "$1" 2>/dev/null; do sleep 1; done
pid=$(head -n 1 "$2/postmaster.pid" 2>/dev/null) && kill -QUIT "$pid" 2>/dev/null
sleep 2
rm -rf "$3""#;
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(SCRIPT)
            .arg("flexiq-pg-watchdog")
            .arg(std::process::id().to_string())
            .arg(&self.data_dir)
            .arg(&self.root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd.spawn().map(drop).map_err(|source| Error::Spawn {
            command: describe(&cmd),
            source,
        })
    }

    /// Starts a streaming standby of this server, with the given settings: for tests of a
    /// failover ([`Self::promote`]). The copy is taken by `pg_basebackup` where it sits beside
    /// the server binaries; the binary-only distributions lack it, and there this server is shut
    /// down for a moment and its data directory copied as it lies. Either way initdb's trust
    /// rules let the copy replicate. The server must be durable for a standby to follow it
    /// safely.
    pub fn start_standby(&mut self, options: &Options) -> Result<LocalPostgres, Error> {
        for (name, value) in &options.settings {
            validate_setting(name, value)?;
        }
        let root = create_unique_dir()?;
        let mut standby = LocalPostgres {
            data_dir: root.join("data"),
            log_file: root.join("postgres.log"),
            socket_dir: root.join("sock"),
            as_pg_user: self.as_pg_user,
            root,
            bin_dir: self.bin_dir.clone(),
            port: 0,
            may_be_running: false,
            removed: false,
        };
        fs::create_dir(&standby.socket_dir)
            .map_err(io_err("create directory", &standby.socket_dir))?;
        let basebackup = standby.bin_dir.join("pg_basebackup");
        if basebackup.is_file() {
            if standby.as_pg_user {
                standby.give_to_pg_user(&standby.root)?;
            }
            let mut cmd = standby.server_command(&basebackup);
            cmd.args(["-h", "127.0.0.1", "-U", PG_USER, "-p"])
                .arg(self.port.to_string())
                .arg("-D")
                .arg(&standby.data_dir)
                // -R: standby.signal and primary_conninfo, so that it starts as a standby.
                .args(["-R", "-X", "stream", "--no-sync"]);
            run_checked(&mut cmd)?;
        } else {
            // A cluster shut down cleanly is consistent on disk: its copy starts as a standby
            // that streams from where the shutdown checkpoint left off.
            self.shut_down()?;
            let mut copy = Command::new("cp");
            copy.arg("-a").arg(&self.data_dir).arg(&standby.data_dir);
            let copied = run_checked(&mut copy);
            self.restart()?;
            copied?;
            let signal = standby.data_dir.join("standby.signal");
            fs::write(&signal, "").map_err(io_err("write", &signal))?;
            let auto = standby.data_dir.join("postgresql.auto.conf");
            fs::OpenOptions::new()
                .append(true)
                .open(&auto)
                .and_then(|mut f| {
                    writeln!(
                        f,
                        "primary_conninfo = 'host=127.0.0.1 port={} user={PG_USER}'",
                        self.port
                    )
                })
                .map_err(io_err("append to", &auto))?;
            if standby.as_pg_user {
                standby.give_to_pg_user(&standby.root)?;
            }
        }
        let mut attempt = 1;
        loop {
            standby.port = free_port()?;
            standby.write_settings(options)?;
            match standby.try_start()? {
                StartOutcome::Started => break,
                StartOutcome::PortTaken(_) if attempt < START_ATTEMPTS => attempt += 1,
                StartOutcome::PortTaken(err) | StartOutcome::Failed(err) => return Err(err),
            }
        }
        standby.wait_for_tcp()?;
        standby.spawn_watchdog()?;
        Ok(standby)
    }

    /// Promotes a standby to primary and waits until it accepts writes.
    pub fn promote(&self) -> Result<(), Error> {
        let pg_ctl = self.bin_dir.join("pg_ctl");
        let mut cmd = self.server_command(&pg_ctl);
        cmd.arg("-D").arg(&self.data_dir).args(["promote", "-w"]);
        run_checked(&mut cmd).map(drop)
    }

    /// Stops the server at once, as a crash would (immediate mode: no checkpoint, sessions
    /// cut), keeping its files.
    pub fn crash(&mut self) -> Result<(), Error> {
        self.pg_ctl_stop("immediate")?;
        self.may_be_running = false;
        Ok(())
    }

    /// A URL for the database superuser on the default database; trust
    /// authentication means it needs no password.
    pub fn url(&self) -> String {
        format!("postgres://{PG_USER}@127.0.0.1:{}/postgres", self.port)
    }

    /// The loopback TCP port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's log file, for tests that check what the server reported.
    pub fn log_file(&self) -> &Path {
        &self.log_file
    }

    /// The cluster's data directory (`PGDATA`).
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The directory the server binaries were taken from; client tools such
    /// as `psql` of the matching version usually sit next to them.
    pub fn bin_dir(&self) -> &Path {
        &self.bin_dir
    }

    /// Shuts the server down (fast mode: open sessions are disconnected) and
    /// deletes its directory. Unlike dropping, this reports failures; even
    /// when it fails, the drop that follows still cleans up.
    pub fn stop(mut self) -> Result<(), Error> {
        self.pg_ctl_stop("fast")?;
        self.may_be_running = false;
        fs::remove_dir_all(&self.root).map_err(io_err("remove directory", &self.root))?;
        self.removed = true;
        Ok(())
    }

    /// Shuts the server down (fast mode) but keeps its files, so that [`Self::restart`] brings
    /// the same cluster back on the same port: for tests of what clients do during an outage.
    pub fn shut_down(&mut self) -> Result<(), Error> {
        self.pg_ctl_stop("fast")?;
        self.may_be_running = false;
        Ok(())
    }

    /// Starts the server again after [`Self::shut_down`], on the same port.
    pub fn restart(&mut self) -> Result<(), Error> {
        match self.try_start()? {
            StartOutcome::Started => self.wait_for_tcp(),
            StartOutcome::PortTaken(err) | StartOutcome::Failed(err) => Err(err),
        }
    }

    /// Builds a command that runs a server binary as the right OS user.
    fn server_command(&self, program: &Path) -> Command {
        let mut cmd = if self.as_pg_user {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", PG_USER, "--"]).arg(program);
            cmd
        } else {
            Command::new(program)
        };
        // Our own directory is readable by the postgres user; the caller's
        // working directory (e.g. /root) may not be, which upsets initdb.
        cmd.current_dir(&self.root);
        cmd
    }

    /// Makes `path` (recursively) owned by the postgres OS user.
    fn give_to_pg_user(&self, path: &Path) -> Result<(), Error> {
        let mut cmd = Command::new("chown");
        cmd.arg("-R").arg(format!("{PG_USER}:{PG_USER}")).arg(path);
        run_checked(&mut cmd).map(drop)
    }

    /// Copies the TLS files into the data directory, owned by the server's OS
    /// user and readable by nobody else.
    fn install_tls(&self, tls: &ServerTls) -> Result<(), Error> {
        let files = [
            (Some(&tls.certificate), TLS_CERTIFICATE),
            (Some(&tls.key), TLS_KEY),
            (tls.client_ca.as_ref(), TLS_CLIENT_CA),
        ];
        for (from, name) in files {
            let Some(from) = from else { continue };
            let to = self.data_dir.join(name);
            fs::copy(from, &to).map_err(io_err("copy", from))?;
            fs::set_permissions(&to, fs::Permissions::from_mode(0o600))
                .map_err(io_err("restrict the permissions of", &to))?;
            if self.as_pg_user {
                self.give_to_pg_user(&to)?;
            }
        }
        Ok(())
    }

    /// Writes every server setting, including the current port, to our
    /// included config file. Writing a file instead of passing `pg_ctl -o`
    /// sidesteps the shell-style parsing of that option string.
    fn write_settings(&self, options: &Options) -> Result<(), Error> {
        let mut settings: Vec<(&str, String)> = vec![
            ("port", self.port.to_string()),
            ("listen_addresses", "127.0.0.1".to_owned()),
            (
                "unix_socket_directories",
                self.socket_dir.to_string_lossy().into_owned(),
            ),
            // Parallel tests and connection pools add up quickly; the default
            // of 100 is easy to exhaust.
            ("max_connections", "200".to_owned()),
        ];
        if !options.durable {
            // Trades crash safety for speed; fine for data nobody keeps.
            for name in ["fsync", "synchronous_commit", "full_page_writes"] {
                settings.push((name, "off".to_owned()));
            }
        }
        if let Some(tls) = &options.tls {
            settings.push(("ssl", "on".to_owned()));
            settings.push(("ssl_cert_file", TLS_CERTIFICATE.to_owned()));
            settings.push(("ssl_key_file", TLS_KEY.to_owned()));
            if tls.client_ca.is_some() {
                settings.push(("ssl_ca_file", TLS_CLIENT_CA.to_owned()));
            }
        }
        // Last, so the caller's choices override ours (later lines win).
        settings.extend(
            options
                .settings
                .iter()
                .map(|(n, v)| (n.as_str(), v.clone())),
        );

        let mut text =
            String::from("# Written by flexiq-local-pg; rewritten on every start attempt.\n");
        for (name, value) in &settings {
            let _ = writeln!(text, "{name} = {}", quote_conf_value(value));
        }
        let path = self.data_dir.join(CONF_FILE);
        fs::write(&path, text).map_err(io_err("write", &path))?;
        if self.as_pg_user {
            // Written by root, possibly under a strict umask: make sure the
            // server can read it.
            self.give_to_pg_user(&path)?;
        }
        Ok(())
    }

    /// Runs `pg_ctl start` once and classifies a failure.
    fn try_start(&mut self) -> Result<StartOutcome, Error> {
        // Only what this attempt logs is relevant to its failure.
        let log_offset = fs::metadata(&self.log_file).map(|m| m.len()).unwrap_or(0);
        let pg_ctl = self.bin_dir.join("pg_ctl");
        let mut cmd = self.server_command(&pg_ctl);
        cmd.arg("-D")
            .arg(&self.data_dir)
            .arg("-l")
            .arg(&self.log_file)
            .args(["-w", "-t", PG_CTL_TIMEOUT_SECS, "start"]);
        // A timed-out start may leave a server behind; drop must stop it.
        self.may_be_running = true;
        let (command, output) = run(&mut cmd)?;
        if output.status.success() {
            return Ok(StartOutcome::Started);
        }
        let log_tail = read_log_tail(&self.log_file, log_offset);
        let port_taken = log_tail.contains("Address already in use");
        let err = Error::Start {
            command,
            status: output.status.to_string(),
            output: combined_output(&output),
            log: self.log_file.clone(),
            log_tail,
        };
        Ok(if port_taken {
            StartOutcome::PortTaken(err)
        } else {
            StartOutcome::Failed(err)
        })
    }

    /// `pg_ctl -w` only proves the postmaster is up; tests connect over TCP,
    /// so make sure that path works before handing out the URL.
    fn wait_for_tcp(&self) -> Result<(), Error> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let started = Instant::now();
        loop {
            match TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
                Ok(_) => return Ok(()),
                Err(source) if started.elapsed() >= TCP_READY_TIMEOUT => {
                    return Err(Error::NotReachable {
                        port: self.port,
                        waited: started.elapsed(),
                        source,
                        log: self.log_file.clone(),
                        log_tail: read_log_tail(&self.log_file, 0),
                    })
                }
                Err(_) => thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// Runs `pg_ctl stop` in the given mode and waits for the server to exit.
    fn pg_ctl_stop(&self, mode: &str) -> Result<(), Error> {
        let pg_ctl = self.bin_dir.join("pg_ctl");
        let mut cmd = self.server_command(&pg_ctl);
        cmd.arg("-D").arg(&self.data_dir).args([
            "-m",
            mode,
            "-w",
            "-t",
            PG_CTL_TIMEOUT_SECS,
            "stop",
        ]);
        run_checked(&mut cmd).map(drop)
    }

    /// Last resort when `pg_ctl` itself fails in drop: SIGQUIT is what
    /// PostgreSQL treats as an immediate shutdown request.
    fn signal_postmaster(&self) {
        let Ok(pid_file) = fs::read_to_string(self.data_dir.join("postmaster.pid")) else {
            return;
        };
        let Some(pid) = pid_file
            .lines()
            .next()
            .and_then(|l| l.trim().parse::<u32>().ok())
        else {
            return;
        };
        let _ = Command::new("kill")
            .args(["-QUIT", &pid.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        // Give it a moment to exit before its files are deleted under it.
        let deadline = Instant::now() + Duration::from_secs(5);
        while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for LocalPostgres {
    /// Immediate shutdown and deletion, ignoring errors: drop runs in tests
    /// that already failed (or are unwinding) and must not make things worse.
    fn drop(&mut self) {
        if self.may_be_running && self.pg_ctl_stop("immediate").is_err() {
            self.signal_postmaster();
        }
        if !self.removed {
            let _ = fs::remove_dir_all(&self.root);
        }
    }
}

/// What one `pg_ctl start` attempt came to.
enum StartOutcome {
    Started,
    /// Someone else bound the port between our pick and the server's bind.
    PortTaken(Error),
    Failed(Error),
}

/// Finds the directory with the server binaries: `FLEXIQ_PG_BIN`, else the
/// newest Debian-style `/usr/lib/postgresql/<N>/bin`, else `pg_config --bindir`.
fn find_bin_dir() -> Result<PathBuf, Error> {
    let mut looked = Vec::new();

    // An explicit choice is final: silently using other binaries would hide
    // a misconfiguration.
    if let Some(dir) = std::env::var_os("FLEXIQ_PG_BIN").filter(|v| !v.is_empty()) {
        let dir = PathBuf::from(dir);
        if has_server_binaries(&dir) {
            return Ok(dir);
        }
        looked.push(format!("{} (from FLEXIQ_PG_BIN)", dir.display()));
        return Err(Error::BinariesNotFound { looked });
    }

    let base = Path::new("/usr/lib/postgresql");
    let mut versions: Vec<(Vec<u32>, PathBuf)> = fs::read_dir(base)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = parse_version(entry.file_name().to_str()?)?;
            Some((version, entry.path().join("bin")))
        })
        .collect();
    // Newest first; numeric so that 10 beats 9.6.
    versions.sort_by(|a, b| b.0.cmp(&a.0));
    if versions.is_empty() {
        looked.push(format!("{}/<version>/bin (none present)", base.display()));
    }
    for (_, bin) in versions {
        if has_server_binaries(&bin) {
            return Ok(bin);
        }
        looked.push(bin.display().to_string());
    }

    match Command::new("pg_config")
        .arg("--bindir")
        .stdin(Stdio::null())
        .output()
    {
        Ok(out) if out.status.success() => {
            let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            if has_server_binaries(&dir) {
                return Ok(dir);
            }
            looked.push(format!("{} (from `pg_config --bindir`)", dir.display()));
        }
        Ok(out) => looked.push(format!("`pg_config --bindir` (failed: {})", out.status)),
        Err(err) => looked.push(format!("`pg_config --bindir` (could not run: {err})")),
    }
    Err(Error::BinariesNotFound { looked })
}

/// Parses a version directory name like `15` or `9.6`.
fn parse_version(name: &str) -> Option<Vec<u32>> {
    name.split('.').map(|part| part.parse().ok()).collect()
}

/// Client-only installs have `pg_ctl` but no server, hence all three.
fn has_server_binaries(dir: &Path) -> bool {
    ["initdb", "pg_ctl", "postgres"]
        .iter()
        .all(|name| dir.join(name).is_file())
}

/// Creates a fresh directory under the system temp dir. The pid separates
/// processes, the counter separates servers within one process, and the
/// timestamp guards against a reused pid finding a stale directory.
pub(crate) fn create_unique_dir() -> Result<PathBuf, Error> {
    let tmp = std::env::temp_dir();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    loop {
        let n = DIR_COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = tmp.join(format!("flexiq-pg-{}-{nanos}-{n}", std::process::id()));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            // Only possible with a stale leftover; the next counter value
            // gives a different name.
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(io_err("create directory", &dir)(err)),
        }
    }
}

/// Picks a currently free loopback port by letting the OS choose one.
pub(crate) fn free_port() -> Result<u16, Error> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(io_err("bind a free port on", Path::new("127.0.0.1")))
}

/// Checks that a setting can be written to a config file unambiguously.
fn validate_setting(name: &str, value: &str) -> Result<(), Error> {
    let invalid = |reason: &str| {
        Err(Error::InvalidSetting {
            name: name.to_owned(),
            reason: reason.to_owned(),
        })
    };
    // PostgreSQL names are identifiers, optionally dotted for extensions;
    // anything else would corrupt the config line.
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    {
        return invalid("names may only contain ASCII letters, digits, '_' and '.'");
    }
    if RESERVED_SETTINGS.contains(&name.to_ascii_lowercase().as_str()) {
        return invalid("this setting is managed by flexiq-local-pg");
    }
    if value.contains('\0') {
        return invalid("values cannot contain NUL");
    }
    Ok(())
}

/// Quotes a value for postgresql.conf: single quotes doubled, backslashes and
/// line breaks escaped, since the config parser reads backslash escapes and
/// does not allow raw newlines inside a quoted string.
fn quote_conf_value(value: &str) -> String {
    let mut quoted = String::with_capacity(value.len() + 2);
    quoted.push('\'');
    for c in value.chars() {
        match c {
            '\'' => quoted.push_str("''"),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            _ => quoted.push(c),
        }
    }
    quoted.push('\'');
    quoted
}

/// Runs a command to completion with captured output and no stdin.
fn run(cmd: &mut Command) -> Result<(String, Output), Error> {
    let command = describe(cmd);
    let output = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|source| Error::Spawn {
            command: command.clone(),
            source,
        })?;
    Ok((command, output))
}

/// Like [`run`], but turns a non-zero exit into [`Error::Command`].
pub(crate) fn run_checked(cmd: &mut Command) -> Result<Output, Error> {
    let (command, output) = run(cmd)?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(Error::Command {
            command,
            status: output.status.to_string(),
            output: combined_output(&output),
        })
    }
}

/// The command line as a readable string for error messages.
fn describe(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(OsStr::to_string_lossy)
        .collect::<Vec<_>>()
        .join(" ")
}

/// stdout and stderr together: PostgreSQL tools split messages between them.
fn combined_output(output: &Output) -> String {
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    let text = text.trim_end();
    if text.is_empty() {
        "(nothing)".to_owned()
    } else {
        text.to_owned()
    }
}

/// The last [`LOG_TAIL_BYTES`] of the log written after `offset`; never
/// fails, because it only decorates another error.
pub(crate) fn read_log_tail(path: &Path, offset: u64) -> String {
    let read = || -> io::Result<String> {
        let mut file = fs::File::open(path)?;
        let len = file.metadata()?.len();
        let start = offset.max(len.saturating_sub(LOG_TAIL_BYTES as u64));
        file.seek(SeekFrom::Start(start))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(String::from_utf8_lossy(&bytes).trim_end().to_owned())
    };
    match read() {
        Ok(text) if text.is_empty() => "(empty)".to_owned(),
        Ok(text) => text,
        Err(err) => format!("(could not read it: {err})"),
    }
}

/// Adapts an `io::Error` into [`Error::Io`] for `map_err`.
pub(crate) fn io_err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> Error {
    let path = path.to_path_buf();
    move |source| Error::Io {
        action,
        path,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_escapes_quotes_backslashes_and_newlines() {
        assert_eq!(quote_conf_value("5MB"), "'5MB'");
        assert_eq!(quote_conf_value("it's"), "'it''s'");
        assert_eq!(quote_conf_value(r"a\b"), r"'a\\b'");
        assert_eq!(quote_conf_value("a\nb"), r"'a\nb'");
    }

    #[test]
    fn versions_sort_numerically() {
        assert!(parse_version("10") > parse_version("9.6"));
        assert_eq!(parse_version("15"), Some(vec![15]));
        assert_eq!(parse_version("main"), None);
    }

    #[test]
    fn settings_are_validated() {
        assert!(validate_setting("work_mem", "5MB").is_ok());
        assert!(validate_setting("auto_explain.log_min_duration", "0").is_ok());
        assert!(validate_setting("work_mem = 1; x", "5MB").is_err());
        assert!(validate_setting("", "x").is_err());
        assert!(validate_setting("PORT", "5432").is_err());
        assert!(validate_setting("work_mem", "a\0b").is_err());
    }
}
