//! The client's PostgreSQL schema and the versioned migrations that build it.

use sqlx::postgres::PgConnection;
use sqlx::{Connection, Executor};

use crate::error::{Error, Result};

/// A migration: its version, a description, and its SQL with `{schema}` placeholders.
struct Migration {
    version: i32,
    description: &'static str,
    sql: &'static str,
}

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        description: "jobs, with their keys on their own rows",
        sql: include_str!("../migrations/0001_jobs.sql"),
    },
    Migration {
        version: 2,
        description: "enqueue functions",
        sql: include_str!("../migrations/0002_enqueue_functions.sql"),
    },
    Migration {
        version: 3,
        description: "leases of running jobs",
        sql: include_str!("../migrations/0003_running.sql"),
    },
];

/// How many migrations a fully migrated schema has applied.
pub fn migration_count() -> usize {
    MIGRATIONS.len()
}

/// What the schema's wake-up channel is named after the schema name with.
const CHANNEL_PREFIX: &str = "flexiq_";

/// The longest schema name accepted: PostgreSQL identifiers, channel names included, are at
/// most 63 bytes, and the wake-up channel is the schema name behind [`CHANNEL_PREFIX`].
pub const MAX_SCHEMA_NAME_LEN: usize = 63 - CHANNEL_PREFIX.len();

/// A schema name, checked to be a plain lowercase identifier so that it can be spliced into SQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema(String);

impl Schema {
    /// Checks `name`: 1 to [`MAX_SCHEMA_NAME_LEN`] (56) characters of `a-z`, `0-9` and `_`, not
    /// starting with a digit.
    pub fn new(name: &str) -> Result<Schema> {
        let valid = !name.is_empty()
            && name.len() <= MAX_SCHEMA_NAME_LEN
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
            && !name.as_bytes()[0].is_ascii_digit();
        if !valid {
            return Err(Error::InvalidArgument(format!(
                "schema name {name:?} must be 1 to {MAX_SCHEMA_NAME_LEN} characters of a-z, 0-9 \
                 and _, not starting with a digit (PostgreSQL names its wake-up channel \
                 {CHANNEL_PREFIX}<schema>, in at most 63 bytes)"
            )));
        }
        Ok(Schema(name.to_owned()))
    }

    /// The schema's name.
    pub fn name(&self) -> &str {
        &self.0
    }

    /// The channel on which the schema's new due jobs are announced.
    pub(crate) fn channel(&self) -> String {
        format!("{CHANNEL_PREFIX}{}", self.0)
    }

    /// `template` with every `{schema}` replaced by this schema's name, and every `{channel}`
    /// by its wake-up channel.
    pub(crate) fn sql(&self, template: &str) -> String {
        template
            .replace("{schema}", &self.0)
            .replace("{channel}", &self.channel())
    }
}

/// Applies every migration the schema lacks, in one transaction, and returns how many ran.
///
/// Safe when several processes migrate at once: a transaction-scoped advisory lock, keyed by
/// the schema name, lets one of them in at a time, and the others then find nothing to do.
pub(crate) async fn migrate(connection: &mut PgConnection, schema: &Schema) -> sqlx::Result<usize> {
    let bootstrap = schema.sql(
        "CREATE SCHEMA IF NOT EXISTS {schema};
         CREATE TABLE IF NOT EXISTS {schema}.schema_migrations (
             version integer PRIMARY KEY,
             description text NOT NULL,
             applied_at timestamptz NOT NULL DEFAULT now())",
    );
    let list = schema.sql("SELECT version FROM {schema}.schema_migrations");
    let record =
        schema.sql("INSERT INTO {schema}.schema_migrations (version, description) VALUES ($1, $2)");
    let mut tx = connection.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
        .bind(format!("flexiq.migrate.{}", schema.name()))
        .execute(tx.as_mut())
        .await?;
    tx.as_mut().execute(bootstrap.as_str()).await?;
    let applied: Vec<i32> = sqlx::query_scalar(&list).fetch_all(tx.as_mut()).await?;
    let missing: Vec<&Migration> = MIGRATIONS
        .iter()
        .filter(|m| !applied.contains(&m.version))
        .collect();
    for m in &missing {
        let sql = schema.sql(m.sql);
        tx.as_mut().execute(sql.as_str()).await?;
        sqlx::query(&record)
            .bind(m.version)
            .bind(m.description)
            .execute(tx.as_mut())
            .await?;
    }
    tx.commit().await?;
    Ok(missing.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_plain_identifiers() {
        assert!(Schema::new("flexiq").is_ok());
        assert!(Schema::new("q_2").is_ok());
        for bad in ["", "2q", "Flexiq", "a-b", "a;drop", "x\"y", &"a".repeat(64)] {
            assert!(Schema::new(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn schema_names_leave_room_for_the_wake_up_channel() {
        let longest = Schema::new(&"s".repeat(56)).expect("56 characters");
        assert_eq!(longest.channel().len(), 63);
        let err = Schema::new(&"s".repeat(57)).expect_err("57 characters");
        assert!(
            err.to_string().contains("must be 1 to 56 characters"),
            "{err}"
        );
    }

    #[test]
    fn every_placeholder_is_replaced() {
        let s = Schema::new("s1").expect("valid");
        for m in MIGRATIONS {
            let sql = s.sql(m.sql);
            assert!(
                !sql.contains("{schema}") && !sql.contains("{channel}"),
                "migration {}",
                m.version
            );
        }
    }
}
