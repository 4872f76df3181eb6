//! Wake-up announcements for the jobs that enqueues on the client's own connections make,
//! except a single enqueue that no other overlaps, which announces within its own statement
//! (see the `grouping` module).
//!
//! They are sent after the enqueue has committed, in a transaction of their own whose commit
//! does not wait for its disk flush (`announce.sql`): a `NOTIFY` inside the enqueueing
//! transaction would make PostgreSQL hold its notification lock while the commit waits for its
//! flush, and concurrent enqueues would commit one at a time. One background task sends them,
//! so the enqueue returns at its commit; queues that callers hand over while it sends go out
//! together in its next announcement. A lost announcement costs latency, never a job: workers
//! poll as well.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::pool::{Pool, Repeat};

/// The least time between two announcements. Under a steady stream of enqueues, an
/// announcement per commit would cost nearly as much as the enqueues themselves; an idle worker
/// still hears of the first job at once, and of later ones within this.
const SPACING: Duration = Duration::from_millis(1);

pub(crate) struct Announcer {
    pool: Arc<Pool>,
    /// `announce.sql`, for the client's schema.
    statement: String,
    pending: Mutex<Pending>,
}

#[derive(Default)]
struct Pending {
    /// Queues of committed jobs that no announcement sent since has covered.
    queues: BTreeSet<String>,
    /// Whether the task is running; it takes `queues` before each announcement it sends.
    sending: bool,
}

impl Announcer {
    pub fn new(pool: Arc<Pool>, statement: String) -> Announcer {
        Announcer {
            pool,
            statement,
            pending: Mutex::default(),
        }
    }

    /// Has `queues`, whose jobs have committed, announced: by an announcement taken after this
    /// call, so one that went out before the commit never counts. Starts the task when it is
    /// not running and there is something to announce; must run inside the runtime.
    pub fn announce<'q>(self: &Arc<Self>, queues: impl IntoIterator<Item = &'q str>) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        pending.queues.extend(queues.into_iter().map(str::to_owned));
        if pending.sending || pending.queues.is_empty() {
            return;
        }
        pending.sending = true;
        drop(pending);
        let announcer = Arc::clone(self);
        tokio::spawn(async move { announcer.send_pending().await });
    }

    /// Sends announcements until no queue is left to announce, one at most every
    /// [`SPACING`].
    async fn send_pending(&self) {
        loop {
            let started = tokio::time::Instant::now();
            let queues: Vec<String> = {
                let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
                if pending.queues.is_empty() {
                    pending.sending = false;
                    return;
                }
                std::mem::take(&mut pending.queues).into_iter().collect()
            };
            let _ = self
                .pool
                .run(Repeat::Safe, async |c| {
                    self.pool
                        .query(&self.statement)
                        .bind(&queues)
                        .execute(c)
                        .await
                })
                .await;
            tokio::time::sleep_until(started + SPACING).await;
        }
    }
}
