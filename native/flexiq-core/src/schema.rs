//! The client's PostgreSQL schema: versioned migrations for its tables, then its functions and
//! triggers, each kept as its current definition and applied again whenever its text changes.

use std::collections::HashMap;

use sha2::{Digest, Sha256};
use sqlx::postgres::PgConnection;
use sqlx::{Connection, Executor};

use crate::error::{Error, Result};
use crate::request;

/// A migration: its version, a description, and its SQL with `{schema}` placeholders. Tables,
/// indexes, sequences and types only; functions and triggers are [`Definition`]s.
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
        description: "leases, checkpoints and redrives of running jobs",
        sql: include_str!("../migrations/0002_running.sql"),
    },
    Migration {
        version: 3,
        description: "leases indexed by lease and by claim, and held exactly while running",
        sql: include_str!("../migrations/0003_leases.sql"),
    },
    Migration {
        version: 4,
        description: "dead letters indexed by queue",
        sql: include_str!("../migrations/0004_dead_letters.sql"),
    },
    Migration {
        version: 5,
        description: "flow control: deadlines, debounce and throttle",
        sql: include_str!("../migrations/0005_flow.sql"),
    },
    Migration {
        version: 6,
        description: "operator queries and pruning: finished jobs and released keys indexed",
        sql: include_str!("../migrations/0006_operator_queries.sql"),
    },
    Migration {
        version: 7,
        description: "maintenance: redrive keys indexed by job, for pruning",
        sql: include_str!("../migrations/0007_maintenance.sql"),
    },
    Migration {
        version: 8,
        description: "payload codecs: the codec and the digest of each encoded payload",
        sql: include_str!("../migrations/0008_payload_codec.sql"),
    },
    Migration {
        version: 9,
        description: "late outcomes and leases through a restart: the attempt a rescue took each job from, the lease of each running attempt",
        sql: include_str!("../migrations/0009_rescued_attempts.sql"),
    },
    Migration {
        version: 10,
        description: "tracing: the trace context each job was enqueued in",
        sql: include_str!("../migrations/0010_trace_context.sql"),
    },
    Migration {
        version: 11,
        description: "paused queues, whose jobs no claim starts until they are resumed",
        sql: include_str!("../migrations/0011_paused_queues.sql"),
    },
    Migration {
        version: 12,
        description: "worker registrations, each with its last heartbeat",
        sql: include_str!("../migrations/0012_workers.sql"),
    },
    Migration {
        version: 13,
        description: "schedules as their processes declare them, paused or not",
        sql: include_str!("../migrations/0013_schedules.sql"),
    },
    Migration {
        version: 14,
        description: "attempt history: each attempt that did not complete its job, and the process of each claim",
        sql: include_str!("../migrations/0014_attempts.sql"),
    },
];

/// A function, or a trigger with its function, as it is now: `sql/functions/<name>.sql`,
/// written with `CREATE OR REPLACE` so that applying it again is harmless.
struct Definition {
    name: &'static str,
    sql: &'static str,
}

impl Definition {
    /// The SHA-256 of the definition with the request's fields filled in (see
    /// `request::sql`), before the schema name is: a field added changes it.
    fn checksum(&self) -> Vec<u8> {
        Sha256::digest(request::sql::expand(self.sql).as_bytes()).to_vec()
    }
}

macro_rules! definition {
    ($name:literal) => {
        Definition {
            name: $name,
            sql: include_str!(concat!("../sql/functions/", $name, ".sql")),
        }
    };
}

/// Every definition, in the order they are applied: what one uses comes before it. (SQL
/// functions are checked against what they name when they are created; a trigger needs its
/// function.)
///
/// `CREATE OR REPLACE` keeps a function's grants, and PUBLIC's revoked EXECUTE, but cannot
/// change its return type or its parameters' names, and a different parameter list makes a
/// second function beside the first. So once the changed definitions are applied, the
/// overloads they superseded are dropped (`superseded_functions.sql`): a field added to the
/// request changes the parameters of every function that takes the request's fields, and
/// nothing else needs saying. The drop takes the grants on the old function with it, so roles
/// must be granted again (`Client::grant`, as after any upgrade). A definition that is removed
/// is dropped by the definition that takes its place (as `announce` drops the trigger that
/// announced inserts), since migrations hold no functions.
const DEFINITIONS: &[Definition] = &[
    definition!("micros_to_timestamptz"),
    definition!("payload_fingerprint"),
    definition!("new_jobs"),
    definition!("request_of"),
    definition!("enqueue_keyed"),
    definition!("insert_keyed"),
    definition!("enqueue_flow"),
    definition!("require"),
    definition!("enqueue"),
    definition!("announce"),
    definition!("release_key"),
    definition!("redrive"),
    definition!("claim_limits"),
    definition!("queue_pauses"),
];

/// Statements that keep the schema's bookkeeping.
const LOCK: &str = include_str!("../sql/migrate/lock.sql");
const BOOTSTRAP: &str = include_str!("../sql/migrate/bootstrap.sql");
const APPLIED_MIGRATIONS: &str = include_str!("../sql/migrate/applied_migrations.sql");
const RECORD_MIGRATION: &str = include_str!("../sql/migrate/record_migration.sql");
const APPLIED_DEFINITIONS: &str = include_str!("../sql/migrate/applied_definitions.sql");
const RECORD_DEFINITION: &str = include_str!("../sql/migrate/record_definition.sql");
const BOOKKEEPING_EXISTS: &str = include_str!("../sql/migrate/bookkeeping_exists.sql");
const SUPERSEDED_FUNCTIONS: &str = include_str!("../sql/migrate/superseded_functions.sql");

/// How many migrations a fully migrated schema has applied.
pub fn migration_count() -> usize {
    MIGRATIONS.len()
}

/// How many definitions (functions and triggers) a fully migrated schema has applied.
pub fn definition_count() -> usize {
    DEFINITIONS.len()
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
    /// starting with a digit, and none of the names PostgreSQL keeps for itself.
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
        if name.starts_with("pg_") || name == "information_schema" {
            return Err(Error::InvalidArgument(format!(
                "schema name {name:?} is reserved for PostgreSQL's own schemas (pg_… and \
                 information_schema); choose another, such as the default flexiq"
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

    /// `template` with the request's fields filled in (see `request::sql`), then every
    /// `{schema}` replaced by this schema's name, and every `{channel}` by its wake-up channel.
    pub(crate) fn sql(&self, template: &str) -> String {
        request::sql::expand(template)
            .replace("{schema}", &self.0)
            .replace("{channel}", &self.channel())
    }

    /// A statement's text as the client sends it: [`Schema::sql`] without the file's comment
    /// lines, so that `pg_stat_activity`, which keeps only a statement's first kilobyte by
    /// default, shows operators the statement rather than its explanation.
    pub(crate) fn statement(&self, template: &str) -> String {
        self.sql(template)
            .lines()
            .filter(|line| !line.trim_start().starts_with("--"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Applies every migration the schema lacks, then every definition whose text differs from the
/// one last applied (or was never applied), all in one transaction; returns how many of
/// either ran. Its statements go out unnamed: they run once per migration, on whatever server
/// session a pooler gives them (see the pool's `Sessions`).
///
/// Safe when several processes migrate at once: a transaction-scoped advisory lock, keyed by
/// the schema name, lets one of them in at a time, and the others then find nothing to do.
/// Migrations run before definitions and so cannot call them (a fresh schema has none yet); a
/// migration that changes what a definition relies on lands with that definition's new text.
pub(crate) async fn migrate(connection: &mut PgConnection, schema: &Schema) -> sqlx::Result<usize> {
    let mut tx = connection.begin().await?;
    sqlx::query(&schema.sql(LOCK))
        .persistent(false)
        .execute(tx.as_mut())
        .await?;
    tx.as_mut().execute(schema.sql(BOOTSTRAP).as_str()).await?;
    let mut ran = 0;

    let applied: Vec<i32> = sqlx::query_scalar(&schema.sql(APPLIED_MIGRATIONS))
        .persistent(false)
        .fetch_all(tx.as_mut())
        .await?;
    let record = schema.sql(RECORD_MIGRATION);
    for m in missing(&applied) {
        tx.as_mut().execute(schema.sql(m.sql).as_str()).await?;
        sqlx::query(&record)
            .persistent(false)
            .bind(m.version)
            .bind(m.description)
            .execute(tx.as_mut())
            .await?;
        ran += 1;
    }

    let applied: HashMap<String, Vec<u8>> = sqlx::query_as(&schema.sql(APPLIED_DEFINITIONS))
        .persistent(false)
        .fetch_all(tx.as_mut())
        .await?
        .into_iter()
        .collect();
    let record = schema.sql(RECORD_DEFINITION);
    let mut defined = false;
    for d in stale(&applied) {
        tx.as_mut().execute(schema.sql(d.sql).as_str()).await?;
        sqlx::query(&record)
            .persistent(false)
            .bind(d.name)
            .bind(d.checksum())
            .execute(tx.as_mut())
            .await?;
        ran += 1;
        defined = true;
    }
    if defined {
        let superseded: Vec<String> = sqlx::query_scalar(&schema.sql(SUPERSEDED_FUNCTIONS))
            .persistent(false)
            .fetch_all(tx.as_mut())
            .await?;
        for function in superseded {
            // A signature as PostgreSQL prints it, quoted where it needs quoting.
            let drop = format!("DROP FUNCTION {function}");
            tx.as_mut().execute(drop.as_str()).await?;
        }
    }
    tx.commit().await?;
    Ok(ran)
}

/// How many of this library's migrations and definitions the schema lacks (what
/// [`migrate`] would apply): 0 when it is fully migrated. Reads only, and takes no lock.
pub(crate) async fn pending(connection: &mut PgConnection, schema: &Schema) -> sqlx::Result<usize> {
    let bookkept: bool = sqlx::query_scalar(&schema.sql(BOOKKEEPING_EXISTS))
        .persistent(false)
        .fetch_one(&mut *connection)
        .await?;
    if !bookkept {
        return Ok(MIGRATIONS.len() + DEFINITIONS.len());
    }
    let migrations: Vec<i32> = sqlx::query_scalar(&schema.sql(APPLIED_MIGRATIONS))
        .persistent(false)
        .fetch_all(&mut *connection)
        .await?;
    let definitions: HashMap<String, Vec<u8>> = sqlx::query_as(&schema.sql(APPLIED_DEFINITIONS))
        .persistent(false)
        .fetch_all(&mut *connection)
        .await?
        .into_iter()
        .collect();
    Ok(missing(&migrations).count() + stale(&definitions).count())
}

/// The migrations not among the `applied` versions, in order.
fn missing(applied: &[i32]) -> impl Iterator<Item = &'static Migration> + '_ {
    MIGRATIONS.iter().filter(|m| !applied.contains(&m.version))
}

/// The definitions whose text differs from the one last applied (by checksum), or never applied.
fn stale(applied: &HashMap<String, Vec<u8>>) -> impl Iterator<Item = &'static Definition> + '_ {
    DEFINITIONS
        .iter()
        .filter(|d| applied.get(d.name) != Some(&d.checksum()))
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
    fn schema_names_that_postgresql_keeps_for_itself_are_refused() {
        for reserved in ["pg_catalog", "pg_toast", "pg_q", "information_schema"] {
            let err = Schema::new(reserved).expect_err(reserved);
            assert!(err.to_string().contains("is reserved"), "{err}");
        }
        assert!(Schema::new("pgq").is_ok());
        assert!(Schema::new("my_information_schema").is_ok());
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
    fn statements_are_sent_without_their_comment_lines() {
        let s = Schema::new("s1").expect("valid");
        assert_eq!(
            s.statement("-- why\nSELECT 1\n  -- and why not\nFROM {schema}.jobs -- kept"),
            "SELECT 1\nFROM s1.jobs -- kept"
        );
    }

    #[test]
    fn every_placeholder_is_replaced() {
        let s = Schema::new("s1").expect("valid");
        let bookkeeping = [
            LOCK,
            BOOTSTRAP,
            APPLIED_MIGRATIONS,
            RECORD_MIGRATION,
            APPLIED_DEFINITIONS,
            RECORD_DEFINITION,
            SUPERSEDED_FUNCTIONS,
        ];
        let texts = MIGRATIONS
            .iter()
            .map(|m| m.sql)
            .chain(DEFINITIONS.iter().map(|d| d.sql))
            .chain(bookkeeping);
        for text in texts {
            let sql = s.sql(text);
            assert!(
                !sql.contains("{schema}") && !sql.contains("{channel}"),
                "{text}"
            );
        }
    }

    /// Definitions are applied again over themselves; migrations run once, so whatever must be
    /// replaceable belongs in a definition.
    #[test]
    fn definitions_replace_and_migrations_hold_no_functions_or_triggers() {
        for d in DEFINITIONS {
            let code = code_of(d.sql);
            assert!(code.contains("CREATE OR REPLACE "), "{}", d.name);
            for plain in ["CREATE FUNCTION", "CREATE TRIGGER", "CREATE PROCEDURE"] {
                assert!(!code.contains(plain), "{}: {plain}", d.name);
            }
        }
        for m in MIGRATIONS {
            let code = code_of(m.sql);
            for kind in ["FUNCTION", "TRIGGER", "PROCEDURE"] {
                assert!(!code.contains(kind), "migration {}: {kind}", m.version);
            }
        }
    }

    #[test]
    fn definition_names_are_unique() {
        let mut names: Vec<&str> = DEFINITIONS.iter().map(|d| d.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), DEFINITIONS.len());
    }

    /// SQL without its `--` comments, upper-cased.
    fn code_of(sql: &str) -> String {
        sql.lines()
            .map(|line| line.split("--").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n")
            .to_uppercase()
    }
}
