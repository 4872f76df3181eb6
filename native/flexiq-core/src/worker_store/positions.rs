//! Where a worker's claims have got to in each queue, so that its next claim reads on from
//! there.
//!
//! A claim reads a queue's due jobs in the order of the jobs_due index. The entries of the jobs
//! claimed before stay in that index, dead, until vacuum removes them, and a claim that starts
//! at the front of the queue steps over every one of them. Vacuum comes less often as the table
//! grows (autovacuum waits for a fifth of it to be dead), so with finished jobs kept for a day
//! the dead entries at the front reach millions: with 300,000 not yet vacuumed, a claim of 100
//! read 1,800 index pages (7 ms) where one starting after the last job claimed read 16 (0.2 ms),
//! and over a two-hour steady run one from the front grew to 20-30 ms. So a worker's claims read
//! each queue on from just after the last job its claims took there.
//!
//! A job can come due behind that point: one enqueued with a higher priority or a due time
//! already past (or in a transaction that began before), one passed over for its concurrency
//! key or a rate limit. (Jobs given back, rescued, retried or redriven are due again from now,
//! after it.) The position decides only where reading starts, never which job may be claimed,
//! and such a job is reached by a claim from the front: one follows at once a claim from the
//! positions that took nothing, before the worker waits for work; and while claims keep taking
//! jobs, one reads from the front every [`FROM_FRONT_EVERY`] (or every [`FRONT_SHARE`] times as
//! long as the last one from the front took, when that is longer), so such a job waits at most
//! that long for a busy worker. A worker woken after waiting reads on from its positions: the new
//! job is after them, and the claim from the front made before it waited found nothing behind.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The least time a busy worker's claims read on from their positions before one reads every
/// queue from its front again: how late a job that came due behind the positions may start.
pub const FROM_FRONT_EVERY: Duration = Duration::from_millis(250);

/// A busy worker reads from the front at most once per this many times the last such read took,
/// so that those reads cost it about 1/`FRONT_SHARE` of its claiming however many dead entries
/// wait for vacuum.
pub const FRONT_SHARE: u32 = 20;

/// The most sets of queues and tasks followed at once: one per worker of a process, normally.
const MOST_FOLLOWED: usize = 64;

/// A job's place in its queue's claim order: priority (highest first), then due time and id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Position {
    pub priority: i32,
    pub run_at_us: i64,
    pub id: i64,
}

/// The positions of each set of queues and tasks that claims have read on from.
#[derive(Default)]
pub(crate) struct Positions {
    followed: Mutex<HashMap<Vec<String>, Followed>>,
}

struct Followed {
    /// The last job claimed in each queue.
    last: HashMap<String, Position>,
    /// When the last claim that read every queue from its front was made.
    from_front_at: Instant,
    /// How long that claim took.
    from_front_took: Duration,
    /// Whether the last claim took jobs: a worker that found nothing and waited reads on from
    /// its positions when woken, however long ago it last read from the front.
    busy: bool,
}

impl Followed {
    /// Whether a busy worker's next claim reads from the front.
    fn front_due(&self) -> bool {
        self.busy
            && self.from_front_at.elapsed()
                >= FROM_FRONT_EVERY.max(self.from_front_took * FRONT_SHARE)
    }
}

/// Where a claim of some queues starts reading each of them: `None` from its front.
pub(crate) struct Start {
    pub after: Vec<Option<Position>>,
    from_front: bool,
}

impl Start {
    /// Every queue from its front.
    pub fn front(queues: usize) -> Start {
        Start {
            after: vec![None; queues],
            from_front: true,
        }
    }

    /// Whether the claim reads every queue from its front.
    pub fn is_from_front(&self) -> bool {
        self.from_front
    }
}

impl Positions {
    /// Where the next claim of `queues` for `tasks` starts in each queue.
    pub fn start(&self, queues: &[String], tasks: &[String]) -> Start {
        match self.followed().get(&key(queues, tasks)) {
            Some(f) if !f.front_due() => Start {
                after: queues.iter().map(|q| f.last.get(q).copied()).collect(),
                from_front: false,
            },
            _ => Start::front(queues.len()),
        }
    }

    /// Notes what a claim that started at `start` and took `elapsed` took: each job's queue and
    /// position, in claim order.
    pub fn claimed(
        &self,
        queues: &[String],
        tasks: &[String],
        start: &Start,
        elapsed: Duration,
        took: &[(&str, Position)],
    ) {
        let key = key(queues, tasks);
        let mut followed = self.followed();
        if followed.len() >= MOST_FOLLOWED && !followed.contains_key(&key) {
            followed.clear();
        }
        let now = Instant::now();
        let f = followed.entry(key).or_insert_with(|| Followed {
            last: HashMap::new(),
            from_front_at: now,
            from_front_took: elapsed,
            busy: false,
        });
        if start.from_front {
            f.from_front_at = now;
            f.from_front_took = elapsed;
        }
        f.busy = !took.is_empty();
        // Claim order is each queue's order, so a queue's last job claimed is its position.
        for &(queue, position) in took {
            f.last.insert(queue.to_owned(), position);
        }
    }

    /// Notes a claim that failed: the next one reads every queue from its front.
    pub fn failed(&self, queues: &[String], tasks: &[String]) {
        self.followed().remove(&key(queues, tasks));
    }

    fn followed(&self) -> MutexGuard<'_, HashMap<Vec<String>, Followed>> {
        self.followed.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One key for a set of queues and tasks; a name cannot hold the NUL that separates the two.
fn key(queues: &[String], tasks: &[String]) -> Vec<String> {
    let mut key = queues.to_vec();
    key.push("\0".into());
    key.extend_from_slice(tasks);
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUICK: Duration = Duration::from_micros(100);

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| (*s).to_owned()).collect()
    }

    fn at(id: i64) -> Position {
        Position {
            priority: 0,
            run_at_us: 1_000 + id,
            id,
        }
    }

    #[test]
    fn claims_move_each_queue_to_its_last_job_short_or_full() {
        let positions = Positions::default();
        let (queues, tasks) = (names(&["a", "b"]), names(&["t"]));
        let first = positions.start(&queues, &tasks);
        assert!(first.from_front && first.after == [None, None]);
        let took = [("a", at(1)), ("a", at(2)), ("b", at(3))];
        positions.claimed(&queues, &tasks, &first, QUICK, &took);
        let next = positions.start(&queues, &tasks);
        assert_eq!(next.after, [Some(at(2)), Some(at(3))]);
        assert!(!next.from_front);

        // Queue b had nothing in this claim: it keeps its position.
        positions.claimed(&queues, &tasks, &next, QUICK, &[("a", at(9))]);
        assert_eq!(
            positions.start(&queues, &tasks).after,
            [Some(at(9)), Some(at(3))]
        );
    }

    #[test]
    fn a_failed_claim_and_other_tasks_start_from_the_front() {
        let positions = Positions::default();
        let (queues, tasks) = (names(&["a"]), names(&["t"]));
        let start = positions.start(&queues, &tasks);
        positions.claimed(&queues, &tasks, &start, QUICK, &[("a", at(1))]);
        assert_eq!(positions.start(&queues, &names(&["u"])).after, [None]);
        let start = positions.start(&queues, &tasks);
        assert_eq!(start.after, [Some(at(1))]);
        positions.failed(&queues, &tasks);
        assert_eq!(positions.start(&queues, &tasks).after, [None]);
    }

    #[test]
    fn a_busy_worker_goes_back_to_the_front_once_the_interval_has_passed() {
        let positions = Positions::default();
        let (queues, tasks) = (names(&["a"]), names(&["t"]));
        let start = positions.start(&queues, &tasks);
        positions.claimed(&queues, &tasks, &start, QUICK, &[("a", at(1))]);
        std::thread::sleep(FROM_FRONT_EVERY);
        let again = positions.start(&queues, &tasks);
        assert!(again.from_front && again.after == [None]);
        // That claim from the front restarts the interval.
        positions.claimed(&queues, &tasks, &again, QUICK, &[("a", at(5))]);
        assert_eq!(positions.start(&queues, &tasks).after, [Some(at(5))]);
    }

    #[test]
    fn a_slow_read_from_the_front_spaces_the_next_ones_out() {
        let positions = Positions::default();
        let (queues, tasks) = (names(&["a"]), names(&["t"]));
        let start = positions.start(&queues, &tasks);
        // The next read from the front is due FRONT_SHARE / 2 intervals later.
        let slow = FROM_FRONT_EVERY / 2;
        positions.claimed(&queues, &tasks, &start, slow, &[("a", at(1))]);
        std::thread::sleep(FROM_FRONT_EVERY);
        assert!(!positions.start(&queues, &tasks).from_front);
    }

    #[test]
    fn a_worker_that_found_nothing_reads_on_from_its_positions_when_woken() {
        let positions = Positions::default();
        let (queues, tasks) = (names(&["a"]), names(&["t"]));
        let start = positions.start(&queues, &tasks);
        positions.claimed(&queues, &tasks, &start, QUICK, &[("a", at(1))]);
        let front = Start::front(1);
        positions.claimed(&queues, &tasks, &front, QUICK, &[]);
        std::thread::sleep(FROM_FRONT_EVERY);
        let woken = positions.start(&queues, &tasks);
        assert!(!woken.from_front);
        assert_eq!(woken.after, [Some(at(1))]);
    }
}
