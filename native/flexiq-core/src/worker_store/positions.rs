//! Where a worker's claims have got to in each queue, so that its next claim reads on from
//! there.
//!
//! A claim reads a queue's due jobs in the order of the jobs_due index. The entries of the jobs
//! claimed before stay in that index, dead, until vacuum removes them, and a claim that starts
//! at the front of the queue steps over every one of them: with 300,000 jobs drained and not yet
//! vacuumed, a claim of 100 read 1,800 index pages (7 ms) where one starting after the last job
//! claimed read 16 (0.2 ms), so a worker draining a large backlog slowed as it went. While its
//! claims come back full, a worker's next claim therefore starts, in each queue, just after the
//! last job its previous claim took there.
//!
//! A job can come due behind that point: one enqueued with a higher priority or a due time
//! already past (or in a transaction that began before), one passed over for its concurrency
//! key or a rate limit. (Jobs given back, rescued, retried or redriven are due again from now,
//! after it.) The position decides only where reading starts, never which job may be
//! claimed: a claim that comes back short, and at least one claim every [`FROM_FRONT_EVERY`],
//! reads every queue from its front, so such a job waits at most that long for a busy worker.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The longest a worker's claims read on from their positions before one reads every queue from
/// its front again: how late a job that came due behind the positions may start. A claim from the
/// front over a million drained, unvacuumed entries took 20-25 ms, so reading from the front this
/// often costs a draining worker a few percent.
pub const FROM_FRONT_EVERY: Duration = Duration::from_millis(250);

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
    /// The last job claimed in each queue, by the claims of this set since the last claim that
    /// came back short.
    last: HashMap<String, Position>,
    /// When the last claim that read every queue from its front was made.
    from_front_at: Instant,
}

/// Where a claim of some queues starts reading each of them: `None` from its front.
pub(crate) struct Start {
    pub after: Vec<Option<Position>>,
    from_front: bool,
}

impl Positions {
    /// Where the next claim of `queues` for `tasks` starts in each queue.
    pub fn start(&self, queues: &[String], tasks: &[String]) -> Start {
        let followed = self.followed();
        match followed.get(&key(queues, tasks)) {
            Some(f) if f.from_front_at.elapsed() < FROM_FRONT_EVERY => Start {
                after: queues.iter().map(|q| f.last.get(q).copied()).collect(),
                from_front: false,
            },
            _ => Start {
                after: vec![None; queues.len()],
                from_front: true,
            },
        }
    }

    /// Notes what a claim that started at `start` took: asked for `limit` jobs, it took `took`
    /// (each job's queue and position, in claim order). A claim that took fewer than it asked
    /// for sends the next one to the front of every queue.
    pub fn claimed(
        &self,
        queues: &[String],
        tasks: &[String],
        start: &Start,
        limit: usize,
        took: &[(&str, Position)],
    ) {
        let key = key(queues, tasks);
        let mut followed = self.followed();
        if took.is_empty() || took.len() < limit {
            followed.remove(&key);
            return;
        }
        if followed.len() >= MOST_FOLLOWED && !followed.contains_key(&key) {
            followed.clear();
        }
        let now = Instant::now();
        let f = followed.entry(key).or_insert_with(|| Followed {
            last: HashMap::new(),
            from_front_at: now,
        });
        if start.from_front {
            f.from_front_at = now;
        }
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
    fn full_claims_move_each_queue_to_its_last_job_and_a_short_one_goes_back_to_the_front() {
        let positions = Positions::default();
        let (queues, tasks) = (names(&["a", "b"]), names(&["t"]));
        let first = positions.start(&queues, &tasks);
        assert!(first.from_front && first.after == [None, None]);
        let took = [("a", at(1)), ("a", at(2)), ("b", at(3))];
        positions.claimed(&queues, &tasks, &first, 3, &took);
        let next = positions.start(&queues, &tasks);
        assert_eq!(next.after, [Some(at(2)), Some(at(3))]);
        assert!(!next.from_front);

        // Queue b had nothing in this claim: it keeps its position.
        positions.claimed(&queues, &tasks, &next, 1, &[("a", at(9))]);
        assert_eq!(
            positions.start(&queues, &tasks).after,
            [Some(at(9)), Some(at(3))]
        );

        let short = positions.start(&queues, &tasks);
        positions.claimed(&queues, &tasks, &short, 2, &[("a", at(10))]);
        assert_eq!(positions.start(&queues, &tasks).after, [None, None]);
    }

    #[test]
    fn a_failed_claim_and_other_tasks_start_from_the_front() {
        let positions = Positions::default();
        let (queues, tasks) = (names(&["a"]), names(&["t"]));
        let start = positions.start(&queues, &tasks);
        positions.claimed(&queues, &tasks, &start, 1, &[("a", at(1))]);
        assert_eq!(positions.start(&queues, &names(&["u"])).after, [None]);
        let start = positions.start(&queues, &tasks);
        assert_eq!(start.after, [Some(at(1))]);
        positions.failed(&queues, &tasks);
        assert_eq!(positions.start(&queues, &tasks).after, [None]);
    }

    #[test]
    fn claims_go_back_to_the_front_once_the_interval_has_passed() {
        let positions = Positions::default();
        let (queues, tasks) = (names(&["a"]), names(&["t"]));
        let start = positions.start(&queues, &tasks);
        positions.claimed(&queues, &tasks, &start, 1, &[("a", at(1))]);
        std::thread::sleep(FROM_FRONT_EVERY);
        let again = positions.start(&queues, &tasks);
        assert!(again.from_front && again.after == [None]);
        // That claim from the front restarts the interval.
        positions.claimed(&queues, &tasks, &again, 1, &[("a", at(5))]);
        assert_eq!(positions.start(&queues, &tasks).after, [Some(at(5))]);
    }
}
