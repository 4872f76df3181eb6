//! Schedules as operators see them: each process declaring a schedule renews its row before
//! every tick (and learns whether it is paused); any client lists them, pauses or resumes one,
//! or triggers one now under the key of a tick at the instant it names.

use super::Operations;
use crate::error::Result;
use crate::keys;
use crate::pool::Repeat;
use crate::validate;

/// A schedule as a declaring process describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleDeclaration {
    pub name: String,
    pub cron: String,
    /// An IANA zone name.
    pub zone: String,
    pub task: String,
    pub queue: String,
    /// The payload and the options (a JSON object in the SQL function `enqueue`'s form) that a
    /// trigger enqueues; `None` when the declaration cannot be repeated that way.
    pub trigger: Option<(Vec<u8>, String)>,
}

/// A declared schedule.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct DeclaredSchedule {
    pub name: String,
    pub cron: String,
    pub zone: String,
    pub task: String,
    pub queue: String,
    /// Whether [`Operations::trigger_schedule`] can enqueue it.
    pub triggerable: bool,
    /// When a declaring process last renewed it, in µs since the epoch.
    pub seen_at_us: i64,
    /// When it was paused, in µs since the epoch; `None` while it runs.
    pub paused_at_us: Option<i64>,
}

impl Operations {
    /// Declares `schedule`, or renews its declaration; returns whether it is paused.
    pub async fn declare_schedule(&self, schedule: &ScheduleDeclaration) -> Result<bool> {
        validate::name("schedule name", &schedule.name)?;
        let (payload, options) = match &schedule.trigger {
            Some((payload, options)) => (Some(payload.as_slice()), Some(options.as_str())),
            None => (None, None),
        };
        let (paused,): (bool,) = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.declare_schedule)
                    .bind(&schedule.name)
                    .bind(&schedule.cron)
                    .bind(&schedule.zone)
                    .bind(&schedule.task)
                    .bind(&schedule.queue)
                    .bind(payload)
                    .bind(options)
                    .fetch_one(c)
                    .await
            })
            .await??;
        Ok(paused)
    }

    /// Every declared schedule, by name.
    pub async fn schedules(&self) -> Result<Vec<DeclaredSchedule>> {
        let rows = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.list_schedules)
                    .fetch_all(c)
                    .await
            })
            .await??;
        Ok(rows)
    }

    /// Pauses (`paused`) or resumes schedule `name`; whether that changed it.
    pub async fn pause_schedule(&self, name: &str, paused: bool) -> Result<bool> {
        validate::name("schedule name", name)?;
        let changed = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query(&self.sql.pause_schedule)
                    .bind(name)
                    .bind(paused)
                    .execute(c)
                    .await
            })
            .await??;
        Ok(changed.rows_affected() == 1)
    }

    /// Enqueues schedule `name` now under `tick_key` (the key of a tick at the instant the
    /// trigger names), kept for `retention_ms`: returns the job and whether it was accepted or
    /// replayed (`accepted`, `replayed`, `conflict`); `None` when there is no such schedule or it
    /// cannot be triggered.
    pub async fn trigger_schedule(
        &self,
        name: &str,
        tick_key: &str,
        retention_ms: i64,
    ) -> Result<Option<(i64, String)>> {
        validate::name("schedule name", name)?;
        validate::key(tick_key)?;
        validate::stored_duration("key retention", retention_ms, 1)?;
        let digest = keys::digest(tick_key);
        let preview = keys::preview(tick_key);
        let row = self
            .pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query_as(&self.sql.trigger_schedule)
                    .bind(name)
                    .bind(&digest)
                    .bind(&preview)
                    .bind(retention_ms)
                    .fetch_optional(c)
                    .await
            })
            .await??;
        Ok(row)
    }
}
