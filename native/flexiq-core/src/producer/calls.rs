//! The statements that single enqueues go out in (the `lanes` module decides which calls go
//! together): a call alone, a batch of calls, and a replay answered by a read.
//!
//! Calls with keys go out first as a plain insert of those whose key is free (`insert_jobs.sql`
//! with its conflict clause), the statement most calls need; the calls it leaves, whose key is
//! held, go on together to `resolve_keyed.sql`, which answers replays. Calls without keys go
//! out as the plain insert alone.

use std::collections::HashMap;

use sqlx::Row;

use super::batch::KeyedBatch;
use super::lanes::Sender;
use super::prepared::{now_micros, repeat_for, Enqueued, Outcome};
use super::{Announce, Producer};
use crate::error::{Error, Result};
use crate::pool::Repeat;
use crate::request::JobRequest;
use crate::statement::{self, Binding, Param};

impl Sender for Producer {
    async fn alone(&self, request: &JobRequest, announce: Announce) -> Result<Enqueued> {
        self.enqueue_alone(request, announce).await
    }

    async fn batch(&self, batch: &[JobRequest]) -> Vec<Result<Enqueued>> {
        self.enqueue_batch_of_calls(batch).await
    }
}

impl Producer {
    /// Enqueues one job, in a batch with the single enqueues of other callers when they
    /// overlap (see the module's text).
    pub(crate) async fn enqueue_grouped(&self, request: &JobRequest) -> Result<Enqueued> {
        // A bad request fails here, alone, rather than failing a batch.
        request.validate()?;
        // A debounce or throttle decides in a statement of its own.
        if request.flow.collapses() {
            return self.enqueue_alone(request, Announce::AfterCommit).await;
        }
        let replay = if request.key.is_some() && self.lanes.replaying() {
            self.replay_of(request).await
        } else {
            Ok(None)
        };
        let answer = match replay {
            Ok(Some(job_id)) => Ok(Enqueued {
                job_id,
                outcome: Outcome::Replayed,
            }),
            Ok(None) => self.lanes.enqueue(request, self).await,
            Err(e) => Err(e),
        };
        self.lanes.record(&answer);
        answer
    }

    /// The job a keyed call replays, found by a read alone (`replay_one.sql`); `None` when the
    /// call is anything but a replay of a live holder.
    async fn replay_of(&self, request: &JobRequest) -> Result<Option<i64>> {
        let keyed = KeyedBatch::group(std::slice::from_ref(request)).map_err(Error::Conflict)?;
        let params = keyed.params(false);
        let row = self
            .pool
            .run(Repeat::Safe, async |c| {
                statement::bind(
                    self.pool.query(&self.sql.replay_one),
                    &params,
                    Binding::FirstValues,
                )
                .fetch_optional(c)
                .await
            })
            .await??;
        Ok(row.map(|row| row.try_get(0)).transpose()?)
    }

    async fn enqueue_alone(&self, request: &JobRequest, announce: Announce) -> Result<Enqueued> {
        let mut one = self
            .enqueue_statement(std::slice::from_ref(request), announce)
            .await?;
        one.pop()
            .ok_or_else(|| Error::Storage("enqueue returned no row".into()))
    }

    /// One answer per call of the batch, as each call would have had alone.
    async fn enqueue_batch_of_calls(&self, batch: &[JobRequest]) -> Vec<Result<Enqueued>> {
        let outcome = if batch.iter().all(|r| r.key.is_none()) {
            self.enqueue_statement(batch, Announce::AfterCommit)
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
                None => self.enqueue_alone(request, Announce::AfterCommit).await,
            });
        }
        out
    }

    /// The calls of a batch of which some carry a key: each call's job, or `None` for a call
    /// left to go again alone. `insert_jobs.sql` inserts every entry whose key is free;
    /// `resolve_keyed.sql` answers the others (replays, keys taken meanwhile, holders whose
    /// retention has closed) together, or leaves them all to go again alone when one of them
    /// conflicts. Two calls with one key and equivalent requests resolve to one job, which the
    /// first of them created.
    async fn enqueue_calls(&self, batch: &[JobRequest]) -> Result<Vec<Option<Enqueued>>> {
        let keyed = KeyedBatch::group(batch).map_err(Error::Conflict)?;
        let mut rows: Vec<(Option<i64>, bool)> = self
            .insert_free_keys(batch, &keyed, Announce::AfterCommit)
            .await?
            .into_iter()
            .map(|id| (id, id.is_some()))
            .collect();
        let left: Vec<usize> = (0..rows.len()).filter(|&p| rows[p].0.is_none()).collect();
        if !left.is_empty() {
            let requests: Vec<JobRequest> =
                left.iter().map(|&p| batch[keyed.sent[p]].clone()).collect();
            // The first statement has committed its jobs; every entry it left has a key, so on
            // an error here each goes again alone and gets its own answer.
            if let Ok(found) = self.resolve(&requests).await {
                for (&p, job) in left.iter().zip(found) {
                    rows[p] = (Some(job.job_id), job.outcome == Outcome::Accepted);
                }
            }
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

    /// `insert_jobs.sql` with its conflict clause: for each entry sent, the job it created, or
    /// `None` when its key was held. New jobs due now are announced within the statement when
    /// `announce` says so.
    async fn insert_free_keys(
        &self,
        batch: &[JobRequest],
        keyed: &KeyedBatch<'_>,
        announce: Announce,
    ) -> Result<Vec<Option<i64>>> {
        let mut params = keyed.params(false);
        params.push(Param::Bool(vec![Some(announce == Announce::Within)]));
        let rows = self
            .enqueue_rows(&self.sql.insert_free_keys, &params, repeat_for(batch))
            .await?;
        let position: HashMap<(&str, &[u8]), usize> = keyed
            .digests()
            .enumerate()
            .filter_map(|(p, d)| Some(((batch[keyed.sent[p]].scope.as_str(), d?), p)))
            .collect();
        let mut placed = vec![None; keyed.sent.len()];
        let mut unkeyed = Vec::new();
        for row in &rows {
            let id: i64 = row.try_get(0)?;
            let scope: Option<String> = row.try_get(4)?;
            let digest: Option<Vec<u8>> = row.try_get(5)?;
            match (scope, digest) {
                (Some(scope), Some(digest)) => {
                    let p = position
                        .get(&(scope.as_str(), digest.as_slice()))
                        .ok_or_else(|| {
                            Error::Storage(
                                "enqueue returned a job for a key it was not sent; is the schema \
                                 migrated to this version of FlexiQ?"
                                    .into(),
                            )
                        })?;
                    placed[*p] = Some(id);
                }
                _ => unkeyed.push(id),
            }
        }
        // Ids are drawn in the order sent, where entries without a key come last.
        unkeyed.sort_unstable();
        let without_key = keyed
            .digests()
            .enumerate()
            .filter_map(|(p, d)| d.is_none().then_some(p));
        for (p, id) in without_key.zip(unkeyed) {
            placed[p] = Some(id);
        }
        Ok(placed)
    }
}
