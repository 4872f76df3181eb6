//! The one error type of the core. The JNI bridge maps each variant to one Java exception class.

use std::fmt;

/// Everything the core can fail with.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// The caller passed something the core refuses before doing any work.
    #[error("{0}")]
    InvalidArgument(String),

    /// The payload cannot be stored: not JSON that RFC 8785 can canonicalize, or too large.
    #[error("{0}")]
    InvalidPayload(String),

    /// A key is bound to a job accepted with a different request. Nothing was written.
    #[error("{0}")]
    Conflict(Box<Conflict>),

    /// PostgreSQL could not be reached (or not within the connect timeout). Nothing was written.
    #[error("PostgreSQL is unavailable: {0}")]
    Unavailable(String),

    /// PostgreSQL refused a new connection at its limit (`max_connections`, or the role's or
    /// the database's connection limit). Nothing was written.
    #[error("PostgreSQL is unavailable: {0}")]
    ServerFull(String),

    /// Every connection of the client's pool stayed busy for the acquire timeout. Nothing was
    /// written.
    #[error("{0}")]
    PoolExhausted(String),

    /// PostgreSQL refused or failed a statement.
    #[error("PostgreSQL error: {0}")]
    Storage(String),
}

/// Shorthand for results of the core.
pub type Result<T> = std::result::Result<T, Error>;

/// An idempotency conflict: the same key, a different request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The entry of the batch that conflicted (0 for a single enqueue).
    pub index: usize,
    /// The job holding the key, or `None` when the key's first use is an earlier entry of the
    /// same batch (which was not written either).
    pub job_id: Option<i64>,
    /// That earlier entry, for a conflict inside one batch.
    pub batch_index: Option<usize>,
    /// The key's bounded preview.
    pub key_preview: String,
    /// The key's SHA-256, in hex.
    pub key_digest: String,
    /// The request fields that differ, by their option names.
    pub fields: Vec<String>,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "idempotency conflict: key {} (sha256 {})",
            self.key_preview, self.key_digest
        )?;
        match (self.job_id, self.batch_index) {
            (Some(job), _) => write!(f, " is bound to job {job}")?,
            (None, Some(earlier)) => write!(f, " was first used by entry {earlier} of this batch")?,
            (None, None) => write!(f, " is bound to another job")?,
        }
        write!(
            f,
            ", accepted with a different request; differing fields: {}",
            self.fields.join(", ")
        )?;
        if self.index > 0 || self.batch_index.is_some() {
            write!(f, " (batch entry {})", self.index)?;
        }
        write!(
            f,
            "; nothing was written. Send the same request to replay it, or use another key (or \
             scope) for another job"
        )
    }
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        match e {
            sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::WorkerCrashed => Error::Unavailable(e.to_string()),
            // Connection exceptions (08) and the server shutting down or starting up (57P).
            sqlx::Error::Database(ref d)
                if d.code()
                    .is_some_and(|c| c.starts_with("08") || c.starts_with("57P")) =>
            {
                Error::Unavailable(e.to_string())
            }
            // Too many clients: the server is up but takes no more connections for now.
            sqlx::Error::Database(ref d) if d.code().as_deref() == Some("53300") => {
                Error::ServerFull(format!(
                    "{e}; the server takes no more connections: lower the pool sizes of its \
                     clients or raise its max_connections"
                ))
            }
            // The server refused the URL's user (no such role, a wrong password, pg_hba.conf)
            // or has no database of the URL's name: the URL or the server's setup needs fixing.
            sqlx::Error::Database(ref d)
                if matches!(d.code().as_deref(), Some("28000" | "28P01")) =>
            {
                Error::Storage(format!(
                    "{e}; check the user and password in the URL, and that the server's \
                     pg_hba.conf lets this user connect from this host"
                ))
            }
            sqlx::Error::Database(ref d) if d.code().as_deref() == Some("3D000") => {
                Error::Storage(format!(
                    "{e}; check the database named in the URL, or create it (CREATE DATABASE) \
                     before connecting"
                ))
            }
            // A missing table or function of ours: the schema was never migrated.
            sqlx::Error::Database(ref d)
                if matches!(d.code().as_deref(), Some("42P01" | "42883" | "3F000")) =>
            {
                Error::Storage(format!(
                    "{e}; is the schema migrated? Build one client with migrate(true), or call \
                     migrate(), as the schema's owner"
                ))
            }
            sqlx::Error::Database(ref d) if d.code().as_deref() == Some("42501") => {
                Error::Storage(format!(
                    "{e}; the role lacks a privilege this call needs: the schema's owner grants \
                     enqueueing with grantProducer(role) and running jobs with \
                     grantWorker(role); cancel, purge, markCompleted, redrive, migrate and \
                     dropSchema need the owner"
                ))
            }
            other => Error::Storage(other.to_string()),
        }
    }
}

/// The SQLSTATE of a database error, if it is one.
pub(crate) fn sqlstate(e: &sqlx::Error) -> Option<String> {
    e.as_database_error()
        .and_then(|d| d.code())
        .map(|c| c.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conflict_says_what_where_and_what_to_do() {
        let conflict = Conflict {
            index: 2,
            job_id: Some(7),
            batch_index: None,
            key_preview: "order-42".into(),
            key_digest: "ab12".into(),
            fields: vec!["payload".into(), "queue".into()],
        };
        assert_eq!(
            conflict.to_string(),
            "idempotency conflict: key order-42 (sha256 ab12) is bound to job 7, accepted with a \
             different request; differing fields: payload, queue (batch entry 2); nothing was \
             written. Send the same request to replay it, or use another key (or scope) for \
             another job"
        );
    }
}
