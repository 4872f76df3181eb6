//! TLS to PostgreSQL, configured as libpq configures it: `sslmode`, `sslrootcert`, `sslcert` and
//! `sslkey` from the URL's query string, else from the `PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT`
//! and `PGSSLKEY` environment variables. sqlx carries the connection over rustls (ring).
//!
//! Two departures from libpq, both sqlx's: the modes that check the chain trust the public
//! roots built into the library (webpki-roots) besides those in `sslrootcert`, and `verify-ca`
//! checks the host name as well (sqlx issue #3793).
//!
//! Certificate files are read once, when the client is built, so a missing or unreadable file
//! is reported then, by name. Connection failures that TLS caused are explained here: which
//! host, what failed, which setting to check.

use std::fs;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::CertificateError;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgSslMode};
use sqlx::Connection;

use crate::error::{Error, Result};

/// Without `sslmode` in the URL or the environment: libpq's default. TLS whenever the server
/// offers it, plain text otherwise, and no certificate check.
const DEFAULT_MODE: Mode = Mode::Prefer;

/// The `sslmode` values supported, by their libpq names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    const ALL: [Mode; 5] = [
        Mode::Disable,
        Mode::Prefer,
        Mode::Require,
        Mode::VerifyCa,
        Mode::VerifyFull,
    ];

    fn name(self) -> &'static str {
        match self {
            Mode::Disable => "disable",
            Mode::Prefer => "prefer",
            Mode::Require => "require",
            Mode::VerifyCa => "verify-ca",
            Mode::VerifyFull => "verify-full",
        }
    }

    /// `source` names where the value came from, for the error.
    fn parse(value: &str, source: &str) -> Result<Mode> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == value)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "{source}={value} is not supported; use disable, prefer, require, verify-ca \
                     or verify-full"
                ))
            })
    }
}

/// The TLS settings of one URL, before any file is read.
#[derive(Debug)]
struct Settings {
    mode: Mode,
    root_cert: Option<String>,
    client_cert: Option<String>,
    client_key: Option<String>,
}

/// The settings' names in the URL and, where the URL does not give them, in the environment.
const SSLMODE: (&str, &str) = ("sslmode", "PGSSLMODE");
const SSLROOTCERT: (&str, &str) = ("sslrootcert", "PGSSLROOTCERT");
const SSLCERT: (&str, &str) = ("sslcert", "PGSSLCERT");
const SSLKEY: (&str, &str) = ("sslkey", "PGSSLKEY");

/// Parameters refused with a pointer to what to use instead: sqlx's own spellings of libpq's
/// TLS settings (so that one name means one thing), and libpq's connect timeout, which is a
/// client setting here.
const INSTEAD: &[(&str, &str)] = &[
    ("ssl-mode", "libpq names it sslmode"),
    ("ssl-root-cert", "libpq names it sslrootcert"),
    ("ssl-ca", "libpq names it sslrootcert"),
    ("ssl-cert", "libpq names it sslcert"),
    ("ssl-key", "libpq names it sslkey"),
    (
        "connect_timeout",
        "set connectTimeout on the client instead",
    ),
];

/// The URL parameters that take effect, by libpq's names. Any other is refused rather than
/// ignored: a misspelt `sslmode` would otherwise leave TLS at its default without a word.
const URL_PARAMETERS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "application_name",
    "options",
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
];

impl Settings {
    /// Reads the settings from the URL's query string, falling back on `env` (the process
    /// environment, or a stand-in in tests). Empty values count as absent.
    fn of(url: &str, env: impl Fn(&str) -> Option<String>) -> Result<Settings> {
        let url = url::Url::parse(url)
            .map_err(|e| Error::InvalidArgument(format!("not a PostgreSQL URL: {e}")))?;
        let query: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        if let Some((key, _)) = query
            .iter()
            .find(|(key, _)| !URL_PARAMETERS.contains(&key.as_str()))
        {
            let instead = INSTEAD
                .iter()
                .find(|(name, _)| name == key)
                .map_or(String::new(), |(_, hint)| format!(" ({hint})"));
            return Err(Error::InvalidArgument(format!(
                "URL parameter {key} is not supported{instead}; the URL takes {}",
                URL_PARAMETERS.join(", ")
            )));
        }
        let setting = |(name, variable): (&'static str, &'static str)| {
            let from_url = query
                .iter()
                .rev()
                .find(|(key, _)| key == name)
                .map(|(_, value)| (value.clone(), name));
            from_url
                .or_else(|| env(variable).map(|value| (value, variable)))
                .filter(|(value, _)| !value.is_empty())
        };
        let mode = match setting(SSLMODE) {
            Some((value, source)) => Mode::parse(&value, source)?,
            None => DEFAULT_MODE,
        };
        Ok(Settings {
            mode,
            root_cert: setting(SSLROOTCERT).map(|(value, _)| value),
            client_cert: setting(SSLCERT).map(|(value, _)| value),
            client_key: setting(SSLKEY).map(|(value, _)| value),
        })
    }

    /// Sets the TLS part of `options`, reading the certificate files the mode needs.
    fn apply(self, options: PgConnectOptions) -> Result<PgConnectOptions> {
        let mode = match (self.mode, &self.root_cert) {
            (Mode::Disable, _) => return Ok(options.ssl_mode(PgSslMode::Disable)),
            (Mode::Prefer, _) => PgSslMode::Prefer,
            // As in libpq: a root certificate makes `require` check the server's chain.
            (Mode::Require, Some(_)) => PgSslMode::VerifyCa,
            (Mode::Require, None) => PgSslMode::Require,
            (Mode::VerifyCa, _) => PgSslMode::VerifyCa,
            (Mode::VerifyFull, _) => PgSslMode::VerifyFull,
        };
        let mut options = options.ssl_mode(mode);
        // Only the modes that check the chain read the roots.
        if let (PgSslMode::VerifyCa | PgSslMode::VerifyFull, Some(path)) = (mode, &self.root_cert) {
            options = options.ssl_root_cert_from_pem(read_certificates(SSLROOTCERT.0, path)?);
        }
        match (self.client_cert, self.client_key) {
            (Some(cert), Some(key)) => Ok(options
                .ssl_client_cert_from_pem(read_certificates(SSLCERT.0, &cert)?)
                .ssl_client_key_from_pem(read_key(&key)?)),
            (None, None) => Ok(options),
            _ => Err(Error::InvalidArgument(
                "sslcert and sslkey go together: give both (a client certificate and its key) \
                 or neither"
                    .into(),
            )),
        }
    }
}

/// The connection options of a `postgres://` URL, TLS included.
pub(crate) fn connect_options(url: &str) -> Result<PgConnectOptions> {
    check_scheme(url)?;
    // The TLS settings first: they explain a bad sslmode better than sqlx does.
    let settings = Settings::of(url, |variable| std::env::var(variable).ok())?;
    let options: PgConnectOptions = url
        .parse()
        .map_err(|e| Error::InvalidArgument(format!("not a PostgreSQL URL: {e}")))?;
    // FlexiQ reads floats in binary, exactly, whatever this says; the startup parameter that
    // sqlx sends for it is one that connection poolers such as PgBouncer refuse by default.
    settings.apply(options.extra_float_digits(None))
}

/// Refuses URLs of other forms, which sqlx would otherwise read as PostgreSQL's anyway (a
/// JDBC URL then ends in a connection refused on the wrong port, which misleads).
fn check_scheme(url: &str) -> Result<()> {
    let scheme = url.split_once("://").map(|(scheme, _)| scheme);
    match scheme {
        Some("postgres" | "postgresql") => Ok(()),
        _ if url.starts_with("jdbc:") => Err(Error::InvalidArgument(
            "a JDBC URL was given; FlexiQ takes libpq's form, \
             postgres://user:password@host:port/database?sslmode=..."
                .into(),
        )),
        Some(other) => Err(Error::InvalidArgument(format!(
            "URL scheme {other}:// is not PostgreSQL's; use postgres://user:password@host:port/database"
        ))),
        None => Err(Error::InvalidArgument(
            "not a URL; use postgres://user:password@host:port/database".into(),
        )),
    }
}

/// Opens one connection; a failure says where it tried, and if TLS caused it, what to check.
pub(crate) async fn connect(options: &PgConnectOptions) -> Result<PgConnection> {
    PgConnection::connect_with(options)
        .await
        .map_err(|e| match explain(e, options.get_host()) {
            Error::Unavailable(m) => {
                Error::Unavailable(format!("{m}; connecting to {}", target(options)))
            }
            Error::Storage(m) => Error::Storage(format!("{m}; connecting to {}", target(options))),
            other => other,
        })
}

/// Where a connection goes, as an error names it: never the password.
pub(crate) fn target(options: &PgConnectOptions) -> String {
    format!(
        "{}:{} (database {}, user {})",
        options.get_host(),
        options.get_port(),
        options.get_database().unwrap_or("default"),
        options.get_username()
    )
}

fn explain(e: sqlx::Error, host: &str) -> Error {
    let reason = match (&e, rustls_error(&e)) {
        (_, Some(rustls::Error::InvalidCertificate(problem))) => format!(
            "TLS certificate verification failed for host {host}: {}; check sslrootcert/sslmode",
            describe(problem)
        ),
        (_, Some(other)) => {
            format!("TLS handshake with host {host} failed: {other}; check sslmode/sslcert/sslkey")
        }
        (sqlx::Error::Tls(inner), None) => format!(
            "TLS with host {host} failed: {inner}; check sslmode and the server's ssl setting"
        ),
        // Whatever answered does not speak PostgreSQL's protocol (another service on the port).
        (sqlx::Error::Protocol(detail), None) => format!(
            "the server did not answer as PostgreSQL does ({}); check that the host and port \
             are PostgreSQL's",
            // sqlx ends its message with the place in its own source, which helps no user.
            detail.split(" (sqlx_").next().unwrap_or(detail)
        ),
        _ => return e.into(),
    };
    Error::Unavailable(reason)
}

/// rustls reports a failed handshake inside an I/O error; setting TLS up fails with sqlx's own.
fn rustls_error(e: &sqlx::Error) -> Option<&rustls::Error> {
    match e {
        sqlx::Error::Io(io) => io.get_ref()?.downcast_ref(),
        sqlx::Error::Tls(inner) => inner.downcast_ref(),
        _ => None,
    }
}

fn describe(problem: &CertificateError) -> String {
    match problem {
        CertificateError::NotValidForName => "name not in certificate".into(),
        CertificateError::NotValidForNameContext { presented, .. } => format!(
            "name not in certificate (it names {})",
            presented.join(", ")
        ),
        CertificateError::UnknownIssuer => {
            "certificate not signed by a CA in sslrootcert or the built-in public roots".into()
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            "certificate expired".into()
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            "certificate not valid yet".into()
        }
        other => other.to_string(),
    }
}

/// A file the server's or client's identity hangs on; unreadable, nothing can connect.
fn read_file(setting: &str, path: &str) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| {
        Error::Unavailable(format!(
            "could not read {setting} {path}: {e}; check {setting}"
        ))
    })
}

fn read_certificates(setting: &str, path: &str) -> Result<Vec<u8>> {
    let pem = read_file(setting, path)?;
    match CertificateDer::pem_slice_iter(&pem).next() {
        Some(Ok(_)) => Ok(pem),
        _ => Err(Error::Unavailable(format!(
            "{setting} {path} holds no PEM certificate; check {setting}"
        ))),
    }
}

fn read_key(path: &str) -> Result<Vec<u8>> {
    let pem = read_file(SSLKEY.0, path)?;
    match PrivateKeyDer::from_pem_slice(&pem) {
        Ok(_) => Ok(pem),
        Err(_) => Err(Error::Unavailable(format!(
            "sslkey {path} holds no PEM private key; check sslkey"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "postgres://app@db.example/app";

    fn settings(query: &str, env: &[(&str, &str)]) -> Result<Settings> {
        Settings::of(&format!("{BASE}{query}"), |variable| {
            env.iter()
                .find(|(name, _)| *name == variable)
                .map(|(_, value)| value.to_string())
        })
    }

    fn mode(query: &str, env: &[(&str, &str)]) -> Mode {
        settings(query, env).expect("valid settings").mode
    }

    #[test]
    fn without_sslmode_the_mode_is_prefer() {
        assert_eq!(mode("", &[]), Mode::Prefer);
        assert_eq!(mode("?application_name=x", &[]), Mode::Prefer);
    }

    #[test]
    fn the_url_wins_over_the_environment() {
        assert_eq!(
            mode("?sslmode=disable", &[("PGSSLMODE", "verify-full")]),
            Mode::Disable
        );
        assert_eq!(mode("", &[("PGSSLMODE", "require")]), Mode::Require);
        let s = settings(
            "?sslrootcert=/url/root.crt",
            &[
                ("PGSSLROOTCERT", "/env/root.crt"),
                ("PGSSLCERT", "/env/c.crt"),
            ],
        )
        .expect("valid");
        assert_eq!(s.root_cert.as_deref(), Some("/url/root.crt"));
        assert_eq!(s.client_cert.as_deref(), Some("/env/c.crt"));
    }

    #[test]
    fn only_postgres_urls_are_taken() {
        for url in [
            "postgres://u@h/db",
            "postgresql://u@h:5433/db?sslmode=disable",
        ] {
            assert!(check_scheme(url).is_ok(), "{url}");
        }
        let jdbc = check_scheme("jdbc:postgresql://h:5432/db?user=u").unwrap_err();
        assert!(jdbc.to_string().contains("a JDBC URL was given"), "{jdbc}");
        let mysql = check_scheme("mysql://u@h/db").unwrap_err();
        assert!(mysql.to_string().contains("scheme mysql://"), "{mysql}");
        let bare = check_scheme("h:5432").unwrap_err();
        assert!(bare.to_string().contains("not a URL"), "{bare}");
    }

    #[test]
    fn every_libpq_mode_but_allow_parses() {
        for m in Mode::ALL {
            assert_eq!(mode(&format!("?sslmode={}", m.name()), &[]), m);
        }
        let err = settings("?sslmode=allow", &[]).expect_err("allow is not supported");
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        assert!(err.to_string().contains("sslmode=allow"), "{err}");
        let err = settings("", &[("PGSSLMODE", "Require")]).expect_err("libpq's names only");
        assert!(err.to_string().contains("PGSSLMODE=Require"), "{err}");
        // Through the whole URL, ahead of sqlx's own reading of it.
        let err = connect_options(&format!("{BASE}?sslmode=bogus")).expect_err("no such mode");
        assert_eq!(
            err.to_string(),
            "sslmode=bogus is not supported; use disable, prefer, require, verify-ca or verify-full"
        );
    }

    #[tokio::test]
    async fn a_server_that_does_not_speak_postgresql_is_named_as_such() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        let server = tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (mut socket, _) = listener.accept().await.expect("accept");
            let mut request = [0u8; 64];
            let _ = socket.read(&mut request).await;
            let _ = socket.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
        });
        let options = connect_options(&format!("postgres://u@127.0.0.1:{port}/db")).expect("URL");
        let err = connect(&options).await.expect_err("not PostgreSQL");
        server.await.expect("server");
        assert!(matches!(err, Error::Unavailable(_)), "{err}");
        let message = err.to_string();
        assert!(
            message.contains("the server did not answer as PostgreSQL does")
                && message.contains(&format!("127.0.0.1:{port}"))
                && !message.contains("sqlx"),
            "{message}"
        );
    }

    #[test]
    fn parameters_that_would_be_ignored_are_refused() {
        for query in [
            "?host=/tmp&port=5433&dbname=d&user=u&password=p&hostaddr=127.0.0.1",
            "?application_name=a&options=-c%20statement_timeout%3D5s&sslmode=disable",
        ] {
            settings(query, &[]).expect("libpq's parameters that take effect");
        }
        let err = settings("?sslmdoe=require", &[]).expect_err("misspelt");
        assert_eq!(
            err.to_string(),
            "URL parameter sslmdoe is not supported; the URL takes host, hostaddr, port, dbname, \
             user, password, application_name, options, sslmode, sslrootcert, sslcert, sslkey"
        );
        let err = settings("?connect_timeout=10", &[]).expect_err("a builder setting");
        assert!(
            err.to_string()
                .contains("set connectTimeout on the client instead"),
            "{err}"
        );
    }

    #[test]
    fn sqlx_spellings_are_refused() {
        let err = settings("?ssl-mode=require", &[]).expect_err("not libpq's name");
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        assert!(err.to_string().contains("ssl-mode"), "{err}");
        assert!(
            err.to_string().contains("(libpq names it sslmode)"),
            "{err}"
        );
    }

    fn applied(query: &str) -> Result<PgConnectOptions> {
        settings(query, &[])?.apply(BASE.parse().expect("URL"))
    }

    #[test]
    fn verifying_without_a_root_certificate_relies_on_the_built_in_roots() {
        let options = applied("?sslmode=verify-full").expect("no sslrootcert needed");
        assert!(matches!(options.get_ssl_mode(), PgSslMode::VerifyFull));
    }

    #[test]
    fn a_client_certificate_needs_its_key() {
        let err = applied("?sslmode=require&sslcert=/c.crt").expect_err("no sslkey");
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        assert!(err.to_string().contains("sslcert and sslkey"), "{err}");
    }

    #[test]
    fn an_unreadable_root_certificate_is_named() {
        let err = applied("?sslmode=verify-full&sslrootcert=/nonexistent/root.crt")
            .expect_err("no such file");
        assert!(matches!(err, Error::Unavailable(_)), "{err}");
        assert!(
            err.to_string()
                .contains("could not read sslrootcert /nonexistent/root.crt"),
            "{err}"
        );
    }

    #[test]
    fn require_with_a_root_certificate_checks_the_chain() {
        // The file is only read by the modes that check the chain.
        let err = applied("?sslmode=require&sslrootcert=/nonexistent/root.crt")
            .expect_err("require reads the root");
        assert!(err.to_string().contains("sslrootcert"), "{err}");
        let options = applied("?sslmode=prefer&sslrootcert=/nonexistent/root.crt")
            .expect("prefer checks nothing");
        assert!(matches!(options.get_ssl_mode(), PgSslMode::Prefer));
    }
}
