//! Single enqueues from concurrent callers, sent together.
//!
//! Each statement sent from a pool connection commits alone, and on a small machine the work
//! around a statement (a round trip, a transaction, a commit) costs more than the job it
//! carries. So single enqueues that arrive while another is on its way wait for the lane, and
//! the call that takes the lane sends every job waiting with its own, as one batch: one
//! statement and one commit for all of them. A call that finds the lane free goes at once, so a
//! lone caller waits for nobody.
//!
//! Callers that a batch has just answered come back together, and the first of them would find
//! the lane free and go alone, leaving the others to the next batch: batches of one and of the
//! rest, in turn; and a call handed the lane by that batch would go with only the calls that
//! waited beside it. So a call that takes a lane right after a batch was answered gathers a
//! batch: it waits among the calls, for at most [`LINGER`], until the callers there were then
//! are there, but those still in flight on the other lane; from [`SPLIT`] callers on, until
//! half of them are (see `expected`). The call that completes the batch takes the lane and
//! sends it at once, rather than wake the gathering call (each wake-up of a blocked thread
//! costs the switch of a core); at the deadline the gathering call sends what has come. The
//! calls waiting meanwhile belong to the batch: a lane freed then is not handed to one of
//! them. A batch frees its lane before it answers its callers, so the first of them back finds
//! it free rather than wait to be handed it. A caller whose calls overlap no one else's never
//! waits.
//!
//! A batch with keys goes out as a plain insert of the calls whose key is free
//! (`insert_calls.sql`), the statement most calls need; the calls it leaves, whose key is held,
//! go on together to `enqueue_calls.sql`, which answers replays.
//!
//! Every call still returns only once its own job has committed, with the answer it would
//! have had alone:
//! - each statement writes all of its jobs or none (a conflict rolls it back), so when it
//!   fails with nothing written, each of its calls goes again alone and gets its own answer;
//!   the calls left to the second statement all have keys, so they go again alone whenever it
//!   fails;
//! - a batch whose outcome is unknown (the connection was lost on the way) goes again alone
//!   only when every job in it has a key, since a repeat then replays; unkeyed calls get the
//!   error, as a lone unkeyed call would.
//!
//! A batch can wait on a lock (a key that an open transaction elsewhere holds). A call that has
//! waited [`SPARE_LANE_AFTER`] therefore takes a second lane, and calls give up on the lanes
//! after [`PATIENCE`] and go out alone, so a stuck batch holds up only the calls inside it.
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
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::prepared::{Enqueued, Outcome};
use super::Announce;
use crate::error::{Error, Result};
use crate::request::JobRequest;

/// How many batches may be on their way at once: one, and a second beside a batch that takes
/// far longer than a batch should (see [`SPARE_LANE_AFTER`]). Tried with two lanes always open,
/// four callers sent batches of about two, half of their statements carrying one call; with
/// one, the batches carry every caller.
const LANES: u32 = 2;
/// How long a call waits for the lane before it opens the second one: many times what a batch
/// takes on a healthy server, so that the second lane serves a batch stuck on a lock or a slow
/// disk.
const SPARE_LANE_AFTER: Duration = Duration::from_millis(5);
/// With this many callers, a batch carries half of them (and at most this many), and the next
/// goes out on the second lane beside it rather than wait: two batches in flight, one commits
/// while the other runs.
const SPLIT: usize = 8;
/// The longest a call that takes a lane gathers the callers of the batch just answered, who
/// are on their way back: a few times what they take to come back.
const LINGER: Duration = Duration::from_millis(1);
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

/// What the lanes send: one call alone, or the calls of a batch, each answered as it would
/// have been alone (the producer's `calls` module).
pub(super) trait Sender {
    async fn alone(&self, request: &JobRequest, announce: Announce) -> Result<Enqueued>;
    async fn batch(&self, batch: &[JobRequest]) -> Vec<Result<Enqueued>>;
}

pub(crate) struct Lanes {
    lanes: u32,
    state: Mutex<State>,
    /// Calls in a row whose answer was a replay.
    replays: AtomicU32,
}

#[derive(Default)]
struct State {
    /// For each lane in use, when its current batch began.
    busy: Vec<Instant>,
    next_ticket: u64,
    /// Calls waiting for a lane, the longest waiting first.
    waiting: VecDeque<Waiter>,
    /// Calls in statements on their way now, on either lane.
    in_flight: usize,
    /// How many callers there were when the last batch was answered (its own calls, those
    /// waiting and those in flight beside it), and when.
    last_batch: Option<(usize, Instant)>,
    /// The batch a call gathers, holding a lane, while it waits for the callers it expects
    /// (see `gather`): calls that arrive meanwhile join it rather than take another lane, and
    /// the one that completes it leads it.
    gathering: Option<Gather>,
}

/// A batch being gathered: the lane it holds, since when, the ticket of the call gathering
/// it, which waits among the others, and how many waiting calls complete it.
struct Gather {
    lane: Instant,
    ticket: u64,
    complete_at: usize,
}

struct Waiter {
    ticket: u64,
    request: JobRequest,
    reply: oneshot::Sender<Turn>,
}

enum Turn {
    /// The batch that carried the call's job has its answer.
    Answered(Result<Enqueued>),
    /// A lane passed to this call at the instant given: it sends its job, and whatever waits
    /// with it.
    Lead(Instant),
}

impl Lanes {
    /// Lanes for a pool of `pool_size` connections: never all of them.
    pub fn new(pool_size: u32) -> Lanes {
        Lanes {
            lanes: LANES.min(pool_size.saturating_sub(1)).max(1),
            state: Mutex::default(),
            replays: AtomicU32::new(0),
        }
    }

    /// How many calls to wait for before sending: when a batch was answered within the last
    /// [`LINGER`], the callers there were then (see `answered`), or half of them from [`SPLIT`]
    /// on, but never those in flight now, whose batch has yet to answer them; at most
    /// [`SPLIT`]. Otherwise none.
    fn expected(&self) -> usize {
        let state = self.state();
        match state.last_batch {
            Some((callers, answered)) if answered.elapsed() < LINGER => {
                let share = if callers >= SPLIT {
                    callers / 2
                } else {
                    callers
                };
                share
                    .min(callers.saturating_sub(state.in_flight))
                    .clamp(1, SPLIT)
            }
            _ => 1,
        }
    }

    /// Queues the call `request` for a lane.
    fn enlist<'a>(&'a self, state: &mut State, request: &JobRequest) -> Ticket<'a> {
        let (reply, turn) = oneshot::channel();
        let number = state.next_ticket;
        state.next_ticket += 1;
        state.waiting.push_back(Waiter {
            ticket: number,
            request: request.clone(),
            reply,
        });
        Ticket {
            lanes: self,
            number,
            turn,
        }
    }

    /// Starts gathering a batch on the lane taken at `since`, until `expected` calls wait
    /// counting the caller's own, which waits among them; `None` when there is nothing to wait
    /// for: `expected` calls are there already, or another call gathers.
    fn start_gathering(
        &self,
        since: Instant,
        request: &JobRequest,
        expected: usize,
    ) -> Option<(Ticket<'_>, Gathering<'_>)> {
        let mut state = self.state();
        if state.gathering.is_some() || state.waiting.len() + 1 >= expected {
            return None;
        }
        let ticket = self.enlist(&mut state, request);
        state.gathering = Some(Gather {
            lane: since,
            ticket: ticket.number,
            complete_at: expected,
        });
        let gathering = Gathering {
            lanes: self,
            ticket: ticket.number,
        };
        Some((ticket, gathering))
    }

    /// The lane of the batch being gathered, for a call that arrives to complete it: it leads
    /// the batch at once, rather than wake the call that gathers it.
    fn completes(state: &mut State) -> Option<Instant> {
        let gather = state.gathering.as_ref()?;
        if state.waiting.len() + 1 < gather.complete_at {
            return None;
        }
        state.gathering.take().map(|g| g.lane)
    }

    /// Ends a gathering whose call has its turn, or `timed_out`; true when that call leads on
    /// its own lane, with the calls that came. When another call completed the batch, it took
    /// the lane; when one leading the other lane took the gathering call into its batch, the
    /// lane is passed on.
    fn stop_gathering(
        &self,
        gathering: Gathering<'_>,
        ticket: &Ticket<'_>,
        timed_out: bool,
    ) -> bool {
        let Some(lane) = gathering.end() else {
            return false;
        };
        if timed_out && ticket.withdraw() {
            return true;
        }
        self.release(lane);
        false
    }

    /// Ends the gathering of the call `ticket` and returns its lane; `None` when it was not
    /// gathering, or another call completed its batch and took the lane.
    fn end_gathering(&self, ticket: u64) -> Option<Instant> {
        let mut state = self.state();
        if state.gathering.as_ref()?.ticket != ticket {
            return None;
        }
        state.gathering.take().map(|g| g.lane)
    }

    /// Whether the caller, holding a lane with no call to send with, overlaps no other single
    /// enqueue: no other lane is in use and no call waits. Such a call announces its job within
    /// its own statement. A `NOTIFY` there holds PostgreSQL's notification lock through the
    /// commit's disk flush; only other commits that notify wait for it (the announcer's, an
    /// enqueue in an application's transaction), never the statements of calls sent together,
    /// which leave their wake-ups to the announcer.
    fn alone(&self) -> bool {
        let state = self.state();
        state.busy.len() == 1 && state.waiting.is_empty()
    }

    /// Counts `calls` in flight until they are answered, or their statement is dropped.
    fn sending(&self, calls: usize) -> InFlight<'_> {
        self.state().in_flight += calls;
        InFlight { lanes: self, calls }
    }

    /// Notes, before its answers go out, the callers there are: the batch just answered, the
    /// calls that wait and the calls in flight beside it. Counted after the answers, the
    /// callers who had already come back would count twice.
    fn answered(&self, mut sent: InFlight<'_>) {
        let mut state = self.state();
        state.last_batch = Some((state.waiting.len() + state.in_flight, Instant::now()));
        state.in_flight -= sent.calls;
        sent.calls = 0;
    }

    /// Whether calls have been replaying long enough for a keyed call to be looked up first.
    pub(super) fn replaying(&self) -> bool {
        self.replays.load(Ordering::Relaxed) >= REPLAY_STREAK
    }

    /// Counts a replay into the streak; any other answer ends it. The count stops once the
    /// streak is reached, so that replays past it write nothing the callers share.
    pub(super) fn record(&self, answer: &Result<Enqueued>) {
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

    /// A lane for a call that has just arrived: when none is in use; or when another is free,
    /// no call is gathering a batch, and either the callers are many (at least [`SPLIT`] when
    /// the last batch was answered, and more than one of them not in flight) or every lane in
    /// use has been on one batch for [`SPARE_LANE_AFTER`].
    fn free_lane(&self, state: &mut State) -> Option<Instant> {
        let many = state.last_batch.is_some_and(|(callers, _)| {
            callers >= SPLIT && callers.saturating_sub(state.in_flight) > 1
        });
        let free = state.busy.is_empty()
            || (state.busy.len() < self.lanes as usize
                && state.gathering.is_none()
                && (many || state.busy.iter().all(|b| b.elapsed() >= SPARE_LANE_AFTER)));
        free.then(|| Self::occupy(state))
    }

    fn occupy(state: &mut State) -> Instant {
        let now = Instant::now();
        state.busy.push(now);
        now
    }

    /// The second lane for the waiting call `ticket`, when it is free.
    fn spare_lane(&self, ticket: u64) -> Spare {
        let mut state = self.state();
        let Some(at) = state.waiting.iter().position(|w| w.ticket == ticket) else {
            return Spare::OnItsWay;
        };
        if state.busy.len() >= self.lanes as usize {
            return Spare::Busy;
        }
        state.waiting.remove(at);
        Spare::Taken(Self::occupy(&mut state))
    }

    /// Passes the lane taken at `since` on to the longest waiting call, or frees it when none
    /// waits.
    fn release(&self, since: Instant) {
        let mut state = self.state();
        let at = state.busy.iter().position(|&b| b == since);
        // A call that stopped waiting cannot take the lane; the next one can. Sending under
        // the lock is safe: it runs none of the receiver's code. While a call gathers a batch,
        // the waiting calls are its own.
        while state.gathering.is_none() {
            let Some(next) = state.waiting.pop_front() else {
                break;
            };
            let passed = Instant::now();
            if next.reply.send(Turn::Lead(passed)).is_ok() {
                if let Some(at) = at {
                    state.busy[at] = passed;
                }
                return;
            }
        }
        if let Some(at) = at {
            state.busy.swap_remove(at);
        }
    }
}

/// A call gathering a batch on the lane it holds; dropped while the call still gathers (its
/// call abandoned), it ends the gathering and passes the lane on.
struct Gathering<'a> {
    lanes: &'a Lanes,
    ticket: u64,
}

impl Gathering<'_> {
    /// Ends the gathering, leaving its lane to the caller; `None` when it had ended already.
    fn end(self) -> Option<Instant> {
        let lane = self.lanes.end_gathering(self.ticket);
        std::mem::forget(self);
        lane
    }
}

impl Drop for Gathering<'_> {
    fn drop(&mut self) {
        if let Some(lane) = self.lanes.end_gathering(self.ticket) {
            self.lanes.release(lane);
        }
    }
}

/// Calls of a statement on its way, counted in [`State::in_flight`] until answered or dropped.
struct InFlight<'a> {
    lanes: &'a Lanes,
    calls: usize,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if self.calls > 0 {
            self.lanes.state().in_flight -= self.calls;
        }
    }
}

/// How a call that has just arrived goes on.
enum Arrival<'a> {
    /// It completes the batch being gathered, whose lane it takes to lead it.
    Completes(Instant),
    /// A lane was free: it took it.
    Free(Instant),
    /// It waits for a lane or its answer.
    Waits(Ticket<'a>),
}

/// What a waiting call that looked for the second lane found.
enum Spare {
    /// It holds the lane now, since the instant given.
    Taken(Instant),
    /// Both lanes are in use.
    Busy,
    /// A lane or an answer is already on its way to it.
    OnItsWay,
}

/// A lane held by the call that leads a batch, since the instant given; passed on when the
/// call ends, however it ends.
struct Lane<'a>(&'a Lanes, Instant);

impl Drop for Lane<'_> {
    fn drop(&mut self) {
        self.0.release(self.1);
    }
}

/// A call waiting for a lane. Dropped, it leaves the queue, and passes on a lane that reached
/// it too late.
struct Ticket<'a> {
    lanes: &'a Lanes,
    number: u64,
    turn: oneshot::Receiver<Turn>,
}

impl Ticket<'_> {
    /// Leaves the queue; false when a lane or an answer is already on its way.
    fn withdraw(&self) -> bool {
        let mut state = self.lanes.state();
        let before = state.waiting.len();
        state.waiting.retain(|w| w.ticket != self.number);
        state.waiting.len() < before
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        if !self.withdraw() {
            if let Ok(Turn::Lead(since)) = self.turn.try_recv() {
                self.lanes.release(since);
            }
        }
    }
}

impl Lanes {
    pub(super) async fn enqueue(
        &self,
        request: &JobRequest,
        sender: &impl Sender,
    ) -> Result<Enqueued> {
        let arrival = {
            let mut state = self.state();
            if let Some(lane) = Lanes::completes(&mut state) {
                Arrival::Completes(lane)
            } else if let Some(since) = self.free_lane(&mut state) {
                Arrival::Free(since)
            } else {
                Arrival::Waits(self.enlist(&mut state, request))
            }
        };
        let since = match self.lane_to_lead(arrival, request, sender).await {
            Ok(since) => since,
            Err(answer) => return answer,
        };
        let lane = Lane(self, since);
        let (requests, replies): (Vec<JobRequest>, Vec<oneshot::Sender<Turn>>) = self
            .take(
                BATCH_LIMIT - 1,
                BATCH_BYTES.saturating_sub(request.stored_payload().len()),
            )
            .into_iter()
            .map(|w| (w.request, w.reply))
            .unzip();
        if requests.is_empty() {
            let announce = if self.alone() {
                Announce::Within
            } else {
                Announce::AfterCommit
            };
            let sent = self.sending(1);
            let answer = sender.alone(request, announce).await;
            self.answered(sent);
            return answer;
        }
        let mut batch = Vec::with_capacity(requests.len() + 1);
        batch.push(request.clone());
        batch.extend(requests);
        let sent = self.sending(batch.len());
        let mut answers = sender.batch(&batch).await.into_iter();
        let own = answers
            .next()
            .unwrap_or_else(|| Err(Error::Storage("a batch returned no answer".into())));
        self.answered(sent);
        // Freed before the callers are answered: the first of them back takes it, rather than
        // wait for it and be woken again when it is handed on.
        drop(lane);
        for (reply, answer) in replies.into_iter().zip(answers) {
            let _ = reply.send(Turn::Answered(answer));
        }
        own
    }

    /// The lane an arrived call leads its batch on, once it has one and has gathered the
    /// batch; or its answer, when another call's batch carried its job.
    async fn lane_to_lead(
        &self,
        arrival: Arrival<'_>,
        request: &JobRequest,
        sender: &impl Sender,
    ) -> std::result::Result<Instant, Result<Enqueued>> {
        let since = match arrival {
            Arrival::Completes(lane) => return Ok(lane),
            Arrival::Free(since) => since,
            Arrival::Waits(mut ticket) => self.turn(&mut ticket, request, sender).await?,
        };
        self.gather(since, request, sender).await
    }

    /// For a call that holds the lane taken at `since`: when a batch was just answered, waits
    /// among the calls, for at most [`LINGER`], until the callers it can expect are there (see
    /// `expected`). The call that completes the batch leads it, this one's job with it; at the
    /// deadline this call leads what has come. Returns the lane this call leads on, or its
    /// answer.
    async fn gather(
        &self,
        since: Instant,
        request: &JobRequest,
        sender: &impl Sender,
    ) -> std::result::Result<Instant, Result<Enqueued>> {
        let expected = self.expected();
        let Some((mut ticket, gathering)) = self.start_gathering(since, request, expected) else {
            return Ok(since);
        };
        let turn = tokio::time::timeout(LINGER, &mut ticket.turn).await;
        if self.stop_gathering(gathering, &ticket, turn.is_err()) {
            return Ok(since);
        }
        match turn {
            Ok(turn) => self.settle(turn, request, sender).await,
            Err(_) => self.turn(&mut ticket, request, sender).await,
        }
    }

    /// Waits for a waiting call's turn: the instant a lane passed to it, or its answer.
    async fn turn(
        &self,
        ticket: &mut Ticket<'_>,
        request: &JobRequest,
        sender: &impl Sender,
    ) -> std::result::Result<Instant, Result<Enqueued>> {
        let turn = match tokio::time::timeout(SPARE_LANE_AFTER, &mut ticket.turn).await {
            Ok(turn) => turn,
            Err(_) => match self.spare_lane(ticket.number) {
                Spare::Taken(since) => return Ok(since),
                Spare::OnItsWay => (&mut ticket.turn).await,
                Spare::Busy => {
                    let rest = PATIENCE - SPARE_LANE_AFTER;
                    match tokio::time::timeout(rest, &mut ticket.turn).await {
                        Ok(turn) => turn,
                        Err(_) if ticket.withdraw() => {
                            return Err(sender.alone(request, Announce::AfterCommit).await)
                        }
                        // Taken into a batch, or handed a lane, just now.
                        Err(_) => (&mut ticket.turn).await,
                    }
                }
            },
        };
        self.settle(turn, request, sender).await
    }

    /// What a waiting call's turn brings: the lane it leads on, or its answer.
    async fn settle(
        &self,
        turn: std::result::Result<Turn, oneshot::error::RecvError>,
        request: &JobRequest,
        sender: &impl Sender,
    ) -> std::result::Result<Instant, Result<Enqueued>> {
        match turn {
            Ok(Turn::Answered(answer)) => Err(answer),
            Ok(Turn::Lead(since)) => Ok(since),
            // The call leading the batch was dropped halfway: a keyed job may go again.
            Err(_) if request.key.is_some() => {
                Err(sender.alone(request, Announce::AfterCommit).await)
            }
            Err(_) => Err(Err(Error::Unavailable(
                "the call that carried this unkeyed enqueue was abandoned before PostgreSQL \
                 answered, so whether the job was written is unknown; look for it before \
                 enqueueing again, or give it a key"
                    .into(),
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(lanes: &Lanes, payload_sizes: &[usize]) {
        let mut state = lanes.state();
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

    /// A call gathering `expected` calls on `lane`.
    fn gathers(lanes: &Lanes, lane: Instant, expected: usize) -> (Ticket<'_>, Gathering<'_>) {
        let request = JobRequest::new("t", vec![]);
        lanes
            .start_gathering(lane, &request, expected)
            .expect("gathers")
    }

    fn sizes(taken: &[Waiter]) -> Vec<usize> {
        taken.iter().map(|w| w.request.payload.len()).collect()
    }

    #[test]
    fn a_call_waits_for_the_callers_of_a_shared_batch_just_answered_and_those_beside_it_up_to_split(
    ) {
        let lanes = Lanes::new(10);
        assert_eq!(lanes.expected(), 1, "no batch yet");
        lanes.answered(lanes.sending(1));
        assert_eq!(lanes.expected(), 1, "a lone call");
        lanes.answered(lanes.sending(4));
        assert_eq!(lanes.expected(), 4);
        lanes.answered(lanes.sending(100));
        assert_eq!(lanes.expected(), SPLIT);
        lanes.answered(lanes.sending(SPLIT + 2));
        assert_eq!(lanes.expected(), SPLIT / 2 + 1, "half of many callers");
        // Calls waiting when a batch is answered come back with its callers; calls in flight
        // beside it come back once their own batch is answered.
        waiting(&lanes, &[1, 1]);
        let beside = lanes.sending(2);
        lanes.answered(lanes.sending(3));
        assert_eq!(lanes.expected(), 5);
        drop(beside);
        assert_eq!(lanes.expected(), 7);
        assert_eq!(lanes.state().in_flight, 0);
        lanes.state().last_batch = Some((4, Instant::now() - LINGER * 2));
        assert_eq!(lanes.expected(), 1, "answered too long ago");
    }

    #[test]
    fn a_gathering_waits_among_the_calls_and_the_call_that_completes_it_takes_its_lane() {
        let lanes = Lanes::new(10);
        let request = JobRequest::new("t", vec![]);
        let lane = Lanes::occupy(&mut lanes.state());
        waiting(&lanes, &[1, 1]);
        assert!(
            lanes.start_gathering(lane, &request, 3).is_none(),
            "three are there already"
        );
        lanes.take(10, 100);
        let (ticket, gathering) = gathers(&lanes, lane, 3);
        assert_eq!(lanes.state().waiting.len(), 1, "waits among the calls");
        assert!(
            lanes.start_gathering(lane, &request, 3).is_none(),
            "one call gathers at a time"
        );
        assert_eq!(Lanes::completes(&mut lanes.state()), None, "two of three");
        waiting(&lanes, &[1]);
        assert_eq!(
            Lanes::completes(&mut lanes.state()),
            Some(lane),
            "the third completes it"
        );
        assert!(lanes.state().gathering.is_none());
        // The gathering call's turn comes with that batch, which took its lane.
        assert!(!lanes.stop_gathering(gathering, &ticket, false));
        assert_eq!(lanes.state().busy, [lane]);
    }

    #[test]
    fn a_gathering_call_leads_what_came_by_the_deadline_unless_the_other_lane_took_it() {
        let lanes = Lanes::new(10);
        let lane = Lanes::occupy(&mut lanes.state());
        let (ticket, gathering) = gathers(&lanes, lane, 4);
        waiting(&lanes, &[1]);
        assert!(lanes.stop_gathering(gathering, &ticket, true), "leads");
        assert_eq!(lanes.state().waiting.len(), 1, "no longer waits itself");
        assert_eq!(lanes.state().busy, [lane]);
        assert!(lanes.state().gathering.is_none());

        lanes.take(10, 100);
        let (ticket, gathering) = gathers(&lanes, lane, 4);
        assert_eq!(lanes.take(10, 100).len(), 1, "taken by the other lane");
        assert!(!lanes.stop_gathering(gathering, &ticket, true));
        assert!(lanes.state().busy.is_empty(), "its lane freed");
    }

    #[test]
    fn an_abandoned_gathering_passes_its_lane_on() {
        let lanes = Lanes::new(10);
        let lane = Lanes::occupy(&mut lanes.state());
        let (ticket, gathering) = gathers(&lanes, lane, 4);
        drop(gathering);
        drop(ticket);
        assert!(lanes.state().gathering.is_none());
        assert!(lanes.state().busy.is_empty());
        assert!(lanes.state().waiting.is_empty());
    }

    #[test]
    fn the_second_lane_opens_for_many_calls_or_beside_a_stuck_batch_never_while_gathering() {
        let lanes = Lanes::new(10);
        let mut state = State::default();
        assert!(lanes.free_lane(&mut state).is_some(), "none in use");
        assert!(
            lanes.free_lane(&mut state).is_none(),
            "a fresh batch, few calls"
        );
        state.last_batch = Some((SPLIT, Instant::now()));
        state.in_flight = SPLIT - 1;
        assert!(
            lanes.free_lane(&mut state).is_none(),
            "many callers, all but one in flight"
        );
        state.in_flight = SPLIT / 2;
        state.gathering = Some(Gather {
            lane: Instant::now(),
            ticket: 0,
            complete_at: 2,
        });
        assert!(lanes.free_lane(&mut state).is_none(), "a call gathers");
        state.gathering = None;
        assert!(lanes.free_lane(&mut state).is_some(), "many callers");
        assert!(lanes.free_lane(&mut state).is_none(), "both lanes in use");

        let mut state = State {
            busy: vec![Instant::now() - SPARE_LANE_AFTER],
            ..State::default()
        };
        assert!(
            lanes.free_lane(&mut state).is_some(),
            "beside a stuck batch"
        );
    }

    #[test]
    fn a_waiting_call_takes_the_second_lane_only_while_it_is_free_and_it_still_waits() {
        let lanes = Lanes::new(10);
        waiting(&lanes, &[1, 1, 1]);
        lanes.state().busy.push(Instant::now());
        assert!(matches!(lanes.spare_lane(1), Spare::Taken(_)));
        assert_eq!(lanes.state().waiting.len(), 2);
        assert!(matches!(lanes.spare_lane(2), Spare::Busy));
        assert!(matches!(lanes.spare_lane(1), Spare::OnItsWay));
        // A pool of two connections has one lane.
        let narrow = Lanes::new(2);
        waiting(&narrow, &[1]);
        narrow.state().busy.push(Instant::now());
        assert!(matches!(narrow.spare_lane(0), Spare::Busy));
    }

    #[test]
    fn a_freed_lane_passes_to_the_longest_waiting_call_unless_a_call_gathers_them() {
        let lanes = Lanes::new(10);
        let mut turns = Vec::new();
        {
            let mut state = lanes.state();
            for ticket in 0..2 {
                let (reply, turn) = oneshot::channel();
                state.waiting.push_back(Waiter {
                    ticket,
                    request: JobRequest::new("t", vec![]),
                    reply,
                });
                turns.push(turn);
            }
        }
        let taken = [Lanes::occupy(&mut lanes.state()), Instant::now()];
        lanes.state().busy.push(taken[1]);
        lanes.state().gathering = Some(Gather {
            lane: taken[1],
            ticket: 9,
            complete_at: 3,
        });
        lanes.release(taken[0]);
        assert_eq!(lanes.state().waiting.len(), 2, "left to the gatherer");
        assert_eq!(lanes.state().busy, [taken[1]]);
        assert!(turns[0].try_recv().is_err());
        lanes.state().gathering = None;
        lanes.release(taken[1]);
        assert!(matches!(turns[0].try_recv(), Ok(Turn::Lead(_))));
        assert_eq!(lanes.state().waiting.len(), 1);
        assert_eq!(lanes.state().busy.len(), 1, "the lane passed on");
    }

    #[test]
    fn a_batch_takes_waiting_calls_in_order_up_to_its_count_and_its_bytes() {
        let lanes = Lanes::new(10);
        waiting(&lanes, &[10, 20, 30, 5]);
        assert_eq!(sizes(&lanes.take(2, 1000)), [10, 20]);
        // The call that would pass the bytes stops the batch, so calls keep their order.
        assert_eq!(sizes(&lanes.take(10, 34)), [30]);
        assert_eq!(sizes(&lanes.take(10, 0)), Vec::<usize>::new());
        assert_eq!(sizes(&lanes.take(10, 5)), [5]);
    }
}
