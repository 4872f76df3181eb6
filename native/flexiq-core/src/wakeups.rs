//! Wake-ups for idle workers. PostgreSQL announces new due jobs on the schema's channel when
//! their statement commits (sql/functions/announce*.sql); one listening connection per client
//! turns every announcement into a new generation number, and idle workers wait for the number
//! to move.
//! Workers poll as well, so a lost announcement costs latency, never a job.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use sqlx::postgres::{PgListener, PgPoolOptions};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::server::Server;

/// How long the listener waits before connecting again after losing PostgreSQL.
const RECONNECT_DELAY: Duration = Duration::from_millis(500);

/// The client's wake-ups: the generation number idle workers wait on.
pub struct Wakeups {
    server: Server,
    channel: String,
    generation: Arc<watch::Sender<u64>>,
    listener: OnceLock<JoinHandle<()>>,
}

impl Wakeups {
    pub(crate) fn new(server: Server, channel: String) -> Wakeups {
        Wakeups {
            server,
            channel,
            generation: Arc::new(watch::channel(0).0),
            listener: OnceLock::new(),
        }
    }

    /// Starts listening, once; must run inside the runtime.
    fn listen(&self) {
        self.listener.get_or_init(|| {
            tokio::spawn(listen(
                self.server.clone(),
                self.channel.clone(),
                self.generation.clone(),
            ))
        });
    }
}

impl Drop for Wakeups {
    fn drop(&mut self) {
        if let Some(listener) = self.listener.get() {
            listener.abort();
        }
    }
}

/// Listens until aborted, reconnecting by itself. Connecting counts as a wake-up, since jobs
/// may have been announced while nobody listened. Each time, the host is found anew (the
/// primary may have moved) and the password asked for again.
async fn listen(server: Server, channel: String, generation: Arc<watch::Sender<u64>>) {
    let bump = || generation.send_modify(|g| *g += 1);
    loop {
        let Ok(options) = server.accepting_options().await else {
            tokio::time::sleep(RECONNECT_DELAY).await;
            continue;
        };
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .connect_lazy_with(options);
        if let Ok(mut listener) = PgListener::connect_with(&pool).await {
            if listener.listen(&channel).await.is_ok() {
                bump();
                // None: the connection dropped; the next call connects and listens again.
                while listener.try_recv().await.is_ok() {
                    bump();
                }
            }
        }
        pool.close().await;
        tokio::time::sleep(RECONNECT_DELAY).await;
    }
}

impl Wakeups {
    /// The current wake-up generation; starts the client's listener on first use.
    pub async fn work_generation(&self) -> u64 {
        self.listen();
        *self.generation.borrow()
    }

    /// Waits until the wake-up generation moves past `seen` (new due jobs were announced, or
    /// [`Wakeups::wake_workers`] was called) or `timeout` passes; returns the generation.
    pub async fn await_work(&self, seen: u64, timeout: Duration) -> u64 {
        self.listen();
        let mut receiver = self.generation.subscribe();
        // Only a timeout ends the wait early: the sender lives as long as the client.
        let _ = tokio::time::timeout(timeout, receiver.wait_for(|g| *g != seen)).await;
        let generation = *receiver.borrow();
        generation
    }

    /// Wakes every waiting worker of this client (one shutting down, for instance).
    pub fn wake_workers(&self) {
        self.generation.send_modify(|g| *g += 1);
    }
}
