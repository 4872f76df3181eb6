//! Worker registrations: each running worker keeps a row saying what it runs and where (this
//! process's host and id, see `host`), and heartbeats it every third of its lease, so that
//! operators see which workers are alive. Maintenance removes the rows of workers that stopped
//! heartbeating (`remove_stale_workers.sql`).

use super::{millis, WorkerStore};
use crate::error::Result;
use crate::pool::Repeat;
use crate::validate;

/// What a worker registers: who it is, where it runs and what it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// Unique per worker (a UUID): a worker's heartbeats and its removal name it.
    pub id: String,
    /// The worker's name in its process (its threads' names start with it).
    pub name: String,
    pub queues: Vec<String>,
    pub tasks: Vec<String>,
    pub concurrency: i32,
    pub lease: std::time::Duration,
    /// When it started, in microseconds since the Unix epoch.
    pub started_at_us: i64,
}

impl WorkerStore {
    /// Registers the worker, or records its heartbeat if it is registered: the one call a
    /// worker makes at its start and every third of its lease.
    pub async fn heartbeat(&self, worker: &Registration) -> Result<()> {
        validate::name("worker id", &worker.id)?;
        validate::label("worker name", &worker.name)?;
        self.pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query(&self.sql.register_worker)
                    .bind(&worker.id)
                    .bind(&worker.name)
                    .bind(crate::host::name())
                    .bind(i64::from(std::process::id()))
                    .bind(&worker.queues)
                    .bind(&worker.tasks)
                    .bind(worker.concurrency)
                    .bind(millis(worker.lease).max(1))
                    .bind(env!("CARGO_PKG_VERSION"))
                    .bind(worker.started_at_us)
                    .execute(c)
                    .await
            })
            .await??;
        Ok(())
    }

    /// Removes the registration of worker `id`, which is stopping.
    pub async fn deregister(&self, id: &str) -> Result<()> {
        self.pool
            .run(Repeat::Safe, async |c| {
                self.pool
                    .query(&self.sql.deregister_worker)
                    .bind(id)
                    .execute(c)
                    .await
            })
            .await??;
        Ok(())
    }
}
