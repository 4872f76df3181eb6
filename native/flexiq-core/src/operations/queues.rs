//! Pausing queues: a paused queue's jobs wait, unclaimed, until it is resumed; enqueues go on.
//! Kept in PostgreSQL, so a pause holds for every worker of every process from its next claim
//! (`functions/queue_pauses.sql` says how a pause waits out the claims already under way).

use super::Operations;
use crate::error::Result;
use crate::pool::Repeat;
use crate::validate;

/// A queue that is paused, and since when.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PausedQueue {
    pub queue: String,
    /// When it was paused, in microseconds since the Unix epoch.
    pub paused_at_us: i64,
}

impl Operations {
    /// Pauses `queue`: returns once no claim may start its jobs; false if it was paused already.
    pub async fn pause_queue(&self, queue: &str) -> Result<bool> {
        self.queue_switch(&self.sql.pause_queue, queue).await
    }

    /// Resumes `queue` and wakes its idle workers; false if it was not paused.
    pub async fn resume_queue(&self, queue: &str) -> Result<bool> {
        self.queue_switch(&self.sql.resume_queue, queue).await
    }

    /// Every paused queue, by name.
    pub async fn paused_queues(&self) -> Result<Vec<PausedQueue>> {
        let paused = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.paused_queues)
                    .fetch_all(c)
                    .await
            })
            .await??;
        Ok(paused)
    }

    /// Runs `pause_queue.sql` or `resume_queue.sql` for `queue`. Either may run twice: the second
    /// run finds the queue as the first left it, so a repeat after a lost answer changes
    /// nothing (only its answer may say false where the first's said true).
    async fn queue_switch(&self, sql: &str, queue: &str) -> Result<bool> {
        validate::name("queue", queue)?;
        let (changed,): (bool,) = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool.query_as(sql).bind(queue).fetch_one(c).await
            })
            .await??;
        Ok(changed)
    }
}
