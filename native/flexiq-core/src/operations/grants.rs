//! Privileges for roles other than the schema's owner: a producer enqueues and reads jobs, a
//! worker runs them. Each gets the least its calls need (`sql/grant_*.sql`); a role that does
//! both gets both.

use sqlx::Connection;

use super::Operations;
use crate::error::{sqlstate, Error, Result};
use crate::pool::Repeat;
use crate::validate;

/// SQLSTATE of a role that does not exist.
const UNDEFINED_OBJECT: &str = "42704";

/// What a role is granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// Enqueue (keyed, unkeyed, bulk) and read jobs.
    Producer,
    /// Claim and run jobs: leases, attempts, retries, checkpoints.
    Worker,
}

impl Operations {
    /// Grants `role` a producer's or a worker's privileges on this client's schema. Run it as
    /// the schema's owner; granting again changes nothing.
    pub async fn grant(&self, role: &str, grant: Grant) -> Result<()> {
        validate::role(role)?;
        let (sql, what) = match grant {
            Grant::Producer => (&self.sql.grant_producer, "producer"),
            Grant::Worker => (&self.sql.grant_worker, "worker"),
        };
        let granted = self
            .pool
            // Granting twice is granting once.
            .run(Repeat::Safe, async |c| {
                let mut tx = c.begin().await?;
                // The grant reads the role from this setting and quotes it (%I).
                self.pool
                    .query(&self.sql.set_grantee)
                    .bind(role)
                    .execute(&mut *tx)
                    .await?;
                sqlx::raw_sql(sql).execute(&mut *tx).await?;
                tx.commit().await
            })
            .await?;
        match granted {
            Err(e) if sqlstate(&e).as_deref() == Some(UNDEFINED_OBJECT) => {
                Err(Error::InvalidArgument(format!(
                    "cannot grant {what} privileges on schema {} to role {role:?}: it does not \
                     exist; create it first (CREATE ROLE ... LOGIN)",
                    self.schema.name()
                )))
            }
            other => Ok(other?),
        }
    }
}
