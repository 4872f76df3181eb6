//! Rate limits: at most so many job starts of a queue or of a concurrency key within a period,
//! across every worker. Stored in PostgreSQL, where every claim keeps them (`claim.sql`); any
//! client may set or remove one.

use super::Operations;
use crate::error::Result;
use crate::pool::Repeat;
use crate::validate;

/// What a rate limit counts the starts of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RateTarget {
    Queue(String),
    ConcurrencyKey(String),
}

impl RateTarget {
    /// The name the limit is stored under.
    fn stored_name(&self) -> Result<String> {
        Ok(match self {
            RateTarget::Queue(queue) => {
                validate::name("queue", queue)?;
                format!("queue:{queue}")
            }
            RateTarget::ConcurrencyKey(key) => {
                validate::name("concurrencyKey", key)?;
                format!("key:{key}")
            }
        })
    }
}

impl Operations {
    /// Lets at most `starts` jobs of `target` start within any `period_ms`, from the next claim
    /// on; replaces the target's limit if it had one.
    pub async fn set_rate_limit(
        &self,
        target: &RateTarget,
        starts: i32,
        period_ms: i64,
    ) -> Result<()> {
        let name = target.stored_name()?;
        validate::count("rate limit starts", starts, 1, MAX_STARTS)?;
        validate::stored_duration("rate limit period", period_ms, 1)?;
        self.pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query(&self.sql.set_rate_limit)
                    .bind(&name)
                    .bind(starts)
                    .bind(period_ms)
                    .execute(c)
                    .await
            })
            .await??;
        Ok(())
    }

    /// Removes the rate limit of `target`; returns whether it had one.
    pub async fn remove_rate_limit(&self, target: &RateTarget) -> Result<bool> {
        let name = target.stored_name()?;
        let removed = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query(&self.sql.remove_rate_limit)
                    .bind(&name)
                    .execute(c)
                    .await
            })
            .await??;
        Ok(removed.rows_affected() == 1)
    }
}

/// Each limit keeps its latest starts in one array, which every claim under it rewrites: past
/// this many, a sliding window is the wrong tool (split the target, or limit fewer starts over a
/// shorter period).
const MAX_STARTS: i32 = 100_000;
