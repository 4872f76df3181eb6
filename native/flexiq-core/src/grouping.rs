//! Single enqueues from concurrent callers, sent together.
//!
//! Each statement sent from a pool connection commits alone, and on a small machine the work
//! around a statement (a round trip, a transaction, a commit) costs more than the job it
//! carries. So single enqueues that arrive while others are on their way wait for a free lane,
//! and the call that takes the lane sends every job waiting with its own, as one batch: one
//! statement and one commit for all of them. A call that finds a lane free goes at once, so a
//! lone caller waits for nobody.
//!
//! Every call still returns only once its own job has committed, with the answer it would
//! have had alone:
//! - a batch writes all of its jobs or none (a conflict rolls the batch back), so when it
//!   fails with nothing written, each of its calls goes again alone and gets its own answer;
//! - a batch whose outcome is unknown (the connection was lost on the way) goes again alone
//!   only when every job in it has a key, since a repeat then replays; unkeyed calls get the
//!   error, as a lone unkeyed call would.
//!
//! A batch can wait on a lock (a key that an open transaction elsewhere holds). Waiting calls
//! therefore give up on the lanes after [`PATIENCE`] and go out alone, so a stuck batch holds
//! up only the calls inside it.
//!
//! Sharing pays for calls that write: their commits wait on the disk, and one flush then serves
//! the whole batch. A replay writes nothing and waits on no disk, and a batch of replays costs
//! more than the same replays sent side by side. So once [`REPLAY_STREAK`] calls in a row have
//! replayed (a client retrying requests it has already made), a keyed call is first looked up
//! by a read of its own (`replay_one.sql`), outside the lanes: a replay is answered by it, and
//! anything else goes on as usual. The first call that creates a job (or fails, or has no key)
//! ends the streak, so a service whose calls mostly create jobs pays no extra read.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use sqlx::Row;
use tokio::sync::oneshot;

use crate::batch::KeyedBatch;
use crate::client::Client;
use crate::enqueue::{now_micros, Enqueued, Outcome};
use crate::error::{Error, Result};
use crate::pool::Repeat;
use crate::request::JobRequest;
use crate::statement::{self, Binding};

/// How many batches may be on their way at once. Two: while one commits, the next fills.
const LANES: u32 = 2;
/// The most jobs one batch carries; the rest wait for the next.
const BATCH_LIMIT: usize = 1000;
/// The most payload bytes that waiting calls add to a batch. Sharing a commit saves little on
/// large payloads, and a batch must stay within what one statement may carry.
const BATCH_BYTES: usize = 16 << 20;
/// How long a call waits for a lane before it goes out on its own: far longer than a batch
/// takes, far shorter than a lock that an application's transaction may hold.
const PATIENCE: Duration = Duration::from_millis(50);
/// Calls in a row that replayed, after which keyed calls are looked up first: enough that a
/// service whose calls mostly create jobs rarely pays for a read that finds nothing.
const REPLAY_STREAK: u32 = 16;

pub(crate) struct Grouping {
    lanes: u32,
    state: Mutex<State>,
    /// Calls in a row whose answer was a replay.
    replays: AtomicU32,
}

#[derive(Default)]
struct State {
    /// Lanes in use.
    running: u32,
    next_ticket: u64,
    /// Calls waiting for a lane, the longest waiting first.
    waiting: VecDeque<Waiter>,
}

struct Waiter {
    ticket: u64,
    request: JobRequest,
    reply: oneshot::Sender<Turn>,
}

enum Turn {
    /// The batch that carried the call's job has its answer.
    Answered(Result<Enqueued>),
    /// A lane passed to this call: it sends its job, and whatever waits with it.
    Lead,
}

impl Grouping {
    /// Lanes for a pool of `pool_size` connections: never all of them.
    pub fn new(pool_size: u32) -> Grouping {
        Grouping {
            lanes: LANES.min(pool_size.saturating_sub(1)).max(1),
            state: Mutex::default(),
            replays: AtomicU32::new(0),
        }
    }

    /// Whether calls have been replaying long enough for a keyed call to be looked up first.
    fn replaying(&self) -> bool {
        self.replays.load(Ordering::Relaxed) >= REPLAY_STREAK
    }

    /// Counts a replay into the streak; any other answer ends it. The count stops once the
    /// streak is reached, so that replays past it write nothing the callers share.
    fn record(&self, answer: &Result<Enqueued>) {
        let streak = self.replays.load(Ordering::Relaxed);
        if matches!(answer, Ok(e) if e.outcome == Outcome::Replayed) {
            if streak < REPLAY_STREAK {
                self.replays.fetch_add(1, Ordering::Relaxed);
            }
        } else if streak != 0 {
            self.replays.store(0, Ordering::Relaxed);
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Up to `limit` waiting calls whose payloads add up to at most `bytes`, the longest
    /// waiting first.
    fn take(&self, limit: usize, bytes: usize) -> Vec<Waiter> {
        let mut state = self.state();
        let mut total = 0;
        let n = state
            .waiting
            .iter()
            .take(limit)
            .take_while(|w| {
                total += w.request.stored_payload().len();
                total <= bytes
            })
            .count();
        state.waiting.drain(..n).collect()
    }

    /// Passes a lane on to the longest waiting call, or frees it when none waits.
    fn release(&self) {
        loop {
            let mut state = self.state();
            let Some(next) = state.waiting.pop_front() else {
                state.running -= 1;
                return;
            };
            drop(state);
            // A call that stopped waiting cannot take the lane; the next one can.
            if next.reply.send(Turn::Lead).is_ok() {
                return;
            }
        }
    }
}

/// A lane held by the call that leads a batch; passed on when the call ends, however it ends.
struct Lane<'a>(&'a Grouping);

impl Drop for Lane<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// A call waiting for a lane. Dropped, it leaves the queue, and passes on a lane that reached
/// it too late.
struct Ticket<'a> {
    grouping: &'a Grouping,
    number: u64,
    turn: oneshot::Receiver<Turn>,
}

impl Ticket<'_> {
    /// Leaves the queue; false when a lane or an answer is already on its way.
    fn withdraw(&self) -> bool {
        let mut state = self.grouping.state();
        let before = state.waiting.len();
        state.waiting.retain(|w| w.ticket != self.number);
        state.waiting.len() < before
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        if !self.withdraw() {
            if let Ok(Turn::Lead) = self.turn.try_recv() {
                self.grouping.release();
            }
        }
    }
}

impl Client {
    /// Enqueues one job, in a batch with the single enqueues of other callers when they
    /// overlap (see the module's text).
    pub(crate) async fn enqueue_grouped(&self, request: &JobRequest) -> Result<Enqueued> {
        // A bad request fails here, alone, rather than failing a batch.
        request.validate()?;
        // enqueue_calls.sql replays or inserts; a debounce or throttle decides in its own statement.
        if request.flow.collapses() {
            return self.enqueue_alone(request).await;
        }
        let replay = if request.key.is_some() && self.grouping.replaying() {
            self.replay_of(request).await
        } else {
            Ok(None)
        };
        let answer = match replay {
            Ok(Some(job_id)) => Ok(Enqueued {
                job_id,
                outcome: Outcome::Replayed,
            }),
            Ok(None) => self.enqueue_in_lanes(request).await,
            Err(e) => Err(e),
        };
        self.grouping.record(&answer);
        answer
    }

    /// The job a keyed call replays, found by a read alone (`replay_one.sql`); `None` when the
    /// call is anything but a replay of a live holder.
    async fn replay_of(&self, request: &JobRequest) -> Result<Option<i64>> {
        let keyed = KeyedBatch::group(std::slice::from_ref(request)).map_err(Error::Conflict)?;
        let params = keyed.params(true);
        let row = self
            .pool
            .run(Repeat::Safe, async |c| {
                statement::bind(
                    sqlx::query(&self.sql.replay_one),
                    &params,
                    Binding::FirstValues,
                )
                .fetch_optional(c)
                .await
            })
            .await??;
        Ok(row.map(|row| row.try_get(0)).transpose()?)
    }

    async fn enqueue_in_lanes(&self, request: &JobRequest) -> Result<Enqueued> {
        let mut ticket = {
            let mut state = self.grouping.state();
            if state.running < self.grouping.lanes {
                state.running += 1;
                None
            } else {
                let (reply, turn) = oneshot::channel();
                let number = state.next_ticket;
                state.next_ticket += 1;
                state.waiting.push_back(Waiter {
                    ticket: number,
                    request: request.clone(),
                    reply,
                });
                Some(Ticket {
                    grouping: &self.grouping,
                    number,
                    turn,
                })
            }
        };
        if let Some(ticket) = ticket.as_mut() {
            let turn = match tokio::time::timeout(PATIENCE, &mut ticket.turn).await {
                Ok(turn) => turn,
                Err(_) if ticket.withdraw() => return self.enqueue_alone(request).await,
                // Taken into a batch, or handed a lane, just now.
                Err(_) => (&mut ticket.turn).await,
            };
            match turn {
                Ok(Turn::Answered(answer)) => return answer,
                Ok(Turn::Lead) => {}
                // The call leading the batch was dropped halfway: a keyed job may go again.
                Err(_) if request.key.is_some() => return self.enqueue_alone(request).await,
                Err(_) => {
                    return Err(Error::Unavailable(
                        "the call that carried this unkeyed enqueue was abandoned before \
                         PostgreSQL answered, so whether the job was written is unknown; look \
                         for it before enqueueing again, or give it a key"
                            .into(),
                    ))
                }
            }
        }
        let _lane = Lane(&self.grouping);
        let (requests, replies): (Vec<JobRequest>, Vec<oneshot::Sender<Turn>>) = self
            .grouping
            .take(
                BATCH_LIMIT - 1,
                BATCH_BYTES.saturating_sub(request.stored_payload().len()),
            )
            .into_iter()
            .map(|w| (w.request, w.reply))
            .unzip();
        if requests.is_empty() {
            return self.enqueue_alone(request).await;
        }
        let mut batch = Vec::with_capacity(requests.len() + 1);
        batch.push(request.clone());
        batch.extend(requests);
        let mut answers = self.enqueue_batch_of_calls(&batch).await.into_iter();
        let own = answers
            .next()
            .unwrap_or_else(|| Err(Error::Storage("a batch returned no answer".into())));
        for (reply, answer) in replies.into_iter().zip(answers) {
            let _ = reply.send(Turn::Answered(answer));
        }
        own
    }

    async fn enqueue_alone(&self, request: &JobRequest) -> Result<Enqueued> {
        let mut one = self
            .enqueue_statement(std::slice::from_ref(request))
            .await?;
        one.pop()
            .ok_or_else(|| Error::Storage("enqueue returned no row".into()))
    }

    /// One answer per call of the batch, as each call would have had alone.
    async fn enqueue_batch_of_calls(&self, batch: &[JobRequest]) -> Vec<Result<Enqueued>> {
        let outcome = if batch.iter().all(|r| r.key.is_none()) {
            self.enqueue_statement(batch)
                .await
                .map(|jobs| jobs.into_iter().map(Some).collect())
        } else {
            self.enqueue_calls(batch).await
        };
        let answers = match outcome {
            Ok(answers) => answers,
            // Nothing was written, and going again alone would wait as long once more.
            Err(error @ Error::PoolExhausted(_)) => {
                return batch.iter().map(|_| Err(error.clone())).collect();
            }
            Err(error) => {
                // Nothing was written, or every job has a key and a repeat replays: each call
                // goes again alone. Otherwise an unkeyed job may have been written: the error
                // is each call's answer, as it would have been alone.
                let nothing_written = matches!(
                    error,
                    Error::Conflict(_) | Error::InvalidArgument(_) | Error::InvalidPayload(_)
                );
                if !nothing_written && batch.iter().any(|r| r.key.is_none()) {
                    return batch.iter().map(|_| Err(error.clone())).collect();
                }
                vec![None; batch.len()]
            }
        };
        let mut out = Vec::with_capacity(batch.len());
        for (request, answer) in batch.iter().zip(answers) {
            out.push(match answer {
                Some(job) => Ok(job),
                None => self.enqueue_alone(request).await,
            });
        }
        out
    }

    /// `enqueue_calls.sql` for calls of which some carry a key: each call's job, or `None` for
    /// a call the statement left to go again alone. Two calls with one key and equivalent
    /// requests resolve to one job, which the first of them created.
    async fn enqueue_calls(&self, batch: &[JobRequest]) -> Result<Vec<Option<Enqueued>>> {
        let keyed = KeyedBatch::group(batch).map_err(Error::Conflict)?;
        let repeat = if batch.iter().all(|r| r.key.is_some()) {
            Repeat::Safe
        } else {
            Repeat::Never
        };
        let rows = self
            .enqueue_rows(&self.sql.enqueue_calls, &keyed.params(true), repeat)
            .await?
            .iter()
            .map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
            .collect::<sqlx::Result<Vec<(Option<i64>, bool)>>>()?;
        if rows.len() != keyed.sent.len() {
            return Err(Error::Storage(format!(
                "enqueue returned {} rows for {} entries; is the schema migrated to this version \
                 of FlexiQ?",
                rows.len(),
                keyed.sent.len()
            )));
        }
        let answers: Vec<Option<Enqueued>> = keyed
            .resolves_to
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let (job_id, created) = rows[p];
                job_id.map(|job_id| Enqueued {
                    job_id,
                    outcome: if created && keyed.sent[p] == i {
                        Outcome::Accepted
                    } else {
                        Outcome::Replayed
                    },
                })
            })
            .collect();
        let now = now_micros();
        let due = batch.iter().zip(&answers).filter(|(r, a)| {
            a.is_some_and(|a| a.outcome == Outcome::Accepted) && r.schedule.is_due(now)
        });
        self.announcer.announce(due.map(|(r, _)| r.queue.as_str()));
        Ok(answers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(grouping: &Grouping, payload_sizes: &[usize]) {
        let mut state = grouping.state();
        for &size in payload_sizes {
            let (reply, _) = oneshot::channel();
            let ticket = state.next_ticket;
            state.next_ticket += 1;
            state.waiting.push_back(Waiter {
                ticket,
                request: JobRequest::new("t", vec![0; size]),
                reply,
            });
        }
    }

    fn sizes(taken: &[Waiter]) -> Vec<usize> {
        taken.iter().map(|w| w.request.payload.len()).collect()
    }

    #[test]
    fn a_batch_takes_waiting_calls_in_order_up_to_its_count_and_its_bytes() {
        let grouping = Grouping::new(10);
        waiting(&grouping, &[10, 20, 30, 5]);
        assert_eq!(sizes(&grouping.take(2, 1000)), [10, 20]);
        // The call that would pass the bytes stops the batch, so calls keep their order.
        assert_eq!(sizes(&grouping.take(10, 34)), [30]);
        assert_eq!(sizes(&grouping.take(10, 0)), Vec::<usize>::new());
        assert_eq!(sizes(&grouping.take(10, 5)), [5]);
    }
}
