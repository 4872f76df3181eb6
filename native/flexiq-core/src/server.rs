//! Where the client's connections go, as libpq reads a URL: one host or several
//! (`postgres://user@primary:5432,standby:5432/db?target_session_attrs=read-write`, as written
//! for Patroni or a managed database), tried in turn until one accepts the session asked for;
//! and the password, asked of a [`PasswordSource`] at every new connection when one is given
//! (tokens that expire, such as IAM authentication's).
//!
//! A failover needs nothing more: a connection lost to the old primary is dropped by the pool,
//! and the next one opened finds the host that now accepts writes. The host that accepted last
//! is tried first, so that a host that is down does not delay every new connection.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{Connection, Executor, Row};

use crate::error::{Error, Result};
use crate::tls;

/// Gives the password for each new connection. Called on the thread that opens the connection,
/// so it should answer quickly (a cached token, refreshed before it expires).
pub trait PasswordSource: Send + Sync {
    /// The password, or why there is none (shown in the connection's error).
    fn password(&self) -> std::result::Result<String, String>;
}

/// The session a connection must offer, by libpq's `target_session_attrs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wanted {
    /// Whatever host answers first.
    Any,
    /// A session that may write (`transaction_read_only` off).
    ReadWrite,
    /// A server not in recovery (not a standby).
    Primary,
}

impl Wanted {
    fn parse(value: &str) -> Result<Wanted> {
        match value {
            "" | "any" => Ok(Wanted::Any),
            "read-write" => Ok(Wanted::ReadWrite),
            "primary" => Ok(Wanted::Primary),
            "read-only" | "standby" | "prefer-standby" => Err(Error::InvalidArgument(format!(
                "target_session_attrs={value} would connect FlexiQ to a standby, where jobs \
                 cannot be written; use read-write or primary (or leave it out)"
            ))),
            other => Err(Error::InvalidArgument(format!(
                "target_session_attrs={other} is not one of libpq's values; FlexiQ takes any, \
                 read-write or primary"
            ))),
        }
    }
}

/// The hosts of one URL, the session wanted of them and where the password comes from.
#[derive(Clone)]
pub(crate) struct Server {
    hosts: Arc<[PgConnectOptions]>,
    wanted: Wanted,
    password: Option<Arc<dyn PasswordSource>>,
    /// How long each host may take to open a connection.
    timeout: Duration,
    /// The host that accepted last, tried first.
    preferred: Arc<AtomicUsize>,
}

impl Server {
    /// Reads `url`, which may name several `host:port` pairs and `target_session_attrs`.
    pub fn new(
        url: &str,
        password: Option<Arc<dyn PasswordSource>>,
        timeout: Duration,
    ) -> Result<Server> {
        let (url, wanted) = session_attrs(url)?;
        let hosts = host_urls(&url)
            .iter()
            .map(|url| tls::connect_options(url))
            .collect::<Result<Vec<_>>>()?;
        Ok(Server {
            hosts: hosts.into(),
            wanted,
            password,
            timeout,
            preferred: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// A new connection to the first host, starting with the one that accepted last, that
    /// opens within the timeout and offers the session wanted.
    pub async fn connect(&self) -> Result<PgConnection> {
        let first = self.preferred.load(Ordering::Relaxed);
        let mut refusals = Vec::new();
        for turn in 0..self.hosts.len() {
            let at = (first + turn) % self.hosts.len();
            match self.connect_to(at).await {
                Ok(connection) => {
                    self.preferred.store(at, Ordering::Relaxed);
                    return Ok(connection);
                }
                // A host that is down, full or a standby: the next may be the primary.
                Err(refused @ (Error::Unavailable(_) | Error::ServerFull(_))) => {
                    refusals.push(refused)
                }
                // A wrong password or certificate is the same on every host: said at once.
                Err(other) => return Err(other),
            }
        }
        if refusals.len() == 1 {
            return Err(refusals.remove(0));
        }
        let reasons: Vec<String> = refusals
            .into_iter()
            .map(|refused| match refused {
                Error::Unavailable(reason) | Error::ServerFull(reason) => reason,
                other => other.to_string(),
            })
            .collect();
        Err(Error::Unavailable(format!(
            "none of the {} hosts of the URL accepted: {}",
            reasons.len(),
            reasons.join("; ")
        )))
    }

    /// The options of a host that accepts now, password included, for a driver that opens its
    /// own connection (the listener's).
    pub async fn accepting_options(&self) -> Result<PgConnectOptions> {
        self.connect().await?.close().await?;
        self.options_of(self.preferred.load(Ordering::Relaxed))
    }

    /// How long opening a connection and setting up its session may take: each host's
    /// timeout, and one more for the statements that follow.
    pub fn patience(&self) -> Duration {
        self.timeout * (self.hosts.len() as u32 + 1)
    }

    /// Where connections go, for errors: every host, never the password.
    pub fn target(&self) -> String {
        let hosts: Vec<String> = self.hosts.iter().map(tls::target).collect();
        hosts.join(", ")
    }

    fn options_of(&self, at: usize) -> Result<PgConnectOptions> {
        let options = self.hosts[at].clone();
        match &self.password {
            None => Ok(options),
            Some(source) => match source.password() {
                Ok(password) => Ok(options.password(&password)),
                Err(reason) => Err(Error::Unavailable(format!(
                    "the password supplier gave no password for {}: {reason}",
                    tls::target(&options)
                ))),
            },
        }
    }

    async fn connect_to(&self, at: usize) -> Result<PgConnection> {
        let options = self.options_of(at)?;
        let opened = tokio::time::timeout(self.timeout, tls::connect(&options))
            .await
            .map_err(|_| {
                Error::Unavailable(format!(
                    "could not connect to {} within {:?}; check that PostgreSQL runs there and \
                     is reachable, or raise connectTimeout",
                    tls::target(&options),
                    self.timeout
                ))
            })?;
        let mut connection = match opened {
            Err(Error::Storage(refused)) if self.password.is_some() => {
                return Err(Error::Storage(format!(
                    "{refused} (the password was the password supplier's)"
                )))
            }
            other => other?,
        };
        if self.wanted == Wanted::Any {
            return Ok(connection);
        }
        // A simple query, which a connection pooler in any mode passes whole.
        let session = tokio::time::timeout(
            self.timeout,
            connection.fetch_one(
                "SELECT pg_is_in_recovery()::text, current_setting('transaction_read_only')",
            ),
        )
        .await;
        let (recovery, read_only) = match session {
            Ok(Ok(row)) => (
                row.try_get::<String, _>(0).map_err(Error::from)?,
                row.try_get::<String, _>(1).map_err(Error::from)?,
            ),
            Ok(Err(e)) => return Err(e.into()),
            Err(_) => ("unknown".into(), "unknown".into()),
        };
        let refused = match self.wanted {
            Wanted::Primary if recovery != "false" => "is in recovery (a standby)",
            Wanted::ReadWrite if read_only != "off" => "offers read-only sessions",
            _ => return Ok(connection),
        };
        let _ = connection.close().await;
        Err(Error::Unavailable(format!(
            "{} {refused}; FlexiQ writes jobs, so it looks for the primary",
            tls::target(&options)
        )))
    }
}

/// `url` without its `target_session_attrs`, and the session that parameter asks for.
fn session_attrs(url: &str) -> Result<(String, Wanted)> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), Wanted::Any));
    };
    let mut wanted = Wanted::Any;
    let mut kept = Vec::new();
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("target_session_attrs", value)) => wanted = Wanted::parse(value)?,
            _ => kept.push(pair),
        }
    }
    Ok(match kept.is_empty() {
        true => (base.to_owned(), wanted),
        false => (format!("{base}?{}", kept.join("&")), wanted),
    })
}

/// One URL per host of `url` (`scheme://user@a:1,b:2/db?q` gives `scheme://user@a:1/db?q` and
/// `scheme://user@b:2/db?q`); a URL of one host, or not of this form, as it is.
fn host_urls(url: &str) -> Vec<String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return vec![url.to_owned()];
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (user, hosts) = match authority.rsplit_once('@') {
        Some((user, hosts)) => (format!("{user}@"), hosts),
        None => (String::new(), authority),
    };
    hosts
        .split(',')
        .map(|host| format!("{scheme}://{user}{host}{tail}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_of_a_url_gets_the_rest_of_it() {
        assert_eq!(
            host_urls("postgres://u:p@a:1,b,[::1]:3/db?sslmode=disable"),
            [
                "postgres://u:p@a:1/db?sslmode=disable",
                "postgres://u:p@b/db?sslmode=disable",
                "postgres://u:p@[::1]:3/db?sslmode=disable"
            ]
        );
        assert_eq!(host_urls("postgres://a:1"), ["postgres://a:1"]);
        assert_eq!(
            host_urls("postgresql://x,y?q=1"),
            ["postgresql://x?q=1", "postgresql://y?q=1"]
        );
    }

    #[test]
    fn target_session_attrs_is_read_and_taken_out() {
        let (url, wanted) =
            session_attrs("postgres://a,b/db?sslmode=disable&target_session_attrs=read-write")
                .expect("read-write");
        assert_eq!(url, "postgres://a,b/db?sslmode=disable");
        assert_eq!(wanted, Wanted::ReadWrite);
        let (url, wanted) =
            session_attrs("postgres://a/db?target_session_attrs=primary").expect("primary");
        assert_eq!((url.as_str(), wanted), ("postgres://a/db", Wanted::Primary));
        let err =
            session_attrs("postgres://a/db?target_session_attrs=standby").expect_err("standby");
        assert!(
            err.to_string().contains("use read-write or primary"),
            "{err}"
        );
        let err = session_attrs("postgres://a/db?target_session_attrs=primery").expect_err("typo");
        assert!(
            err.to_string().contains("any, read-write or primary"),
            "{err}"
        );
    }

    #[test]
    fn every_host_is_named_in_the_target() {
        let server = Server::new(
            "postgres://u:secret@a:1,b:2/db?sslmode=disable",
            None,
            Duration::from_secs(1),
        )
        .expect("two hosts");
        assert_eq!(
            server.target(),
            "a:1 (database db, user u), b:2 (database db, user u)"
        );
    }

    #[tokio::test]
    async fn hosts_that_refuse_are_each_named_and_a_supplier_failure_says_so() {
        // Ports nothing listens on: each refusal is named.
        let server = Server::new(
            "postgres://u@127.0.0.1:9,127.0.0.1:7/db?sslmode=disable",
            None,
            Duration::from_secs(5),
        )
        .expect("two hosts");
        let err = server.connect().await.expect_err("nothing there");
        let message = err.to_string();
        assert!(matches!(err, Error::Unavailable(_)), "{message}");
        assert!(
            message.contains("none of the 2 hosts")
                && message.contains("127.0.0.1:9")
                && message.contains("127.0.0.1:7"),
            "{message}"
        );
        struct Broken;
        impl PasswordSource for Broken {
            fn password(&self) -> std::result::Result<String, String> {
                Err("the token service is down".into())
            }
        }
        let server = Server::new(
            "postgres://u@127.0.0.1:9/db?sslmode=disable",
            Some(Arc::new(Broken)),
            Duration::from_secs(5),
        )
        .expect("one host");
        let err = server.connect().await.expect_err("no password");
        assert!(
            err.to_string()
                .contains("the password supplier gave no password for 127.0.0.1:9")
                && err.to_string().contains("the token service is down"),
            "{err}"
        );
    }
}
