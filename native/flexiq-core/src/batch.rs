//! A batch as PostgreSQL takes it: one array per job column. And, for a batch with keys, the
//! grouping of entries by key that happens before anything is sent: one entry per key goes
//! to PostgreSQL, and a key used twice for different requests is refused here.

use std::collections::HashMap;

use sqlx::postgres::{PgArguments, Postgres};
use sqlx::query::Query;

use crate::error::Conflict;
use crate::keys;
use crate::request::{differing_fields, JobRequest, Schedule};

/// The job columns of some entries, in the order the statements take them ($1 to $14).
pub(crate) struct Columns<'a> {
    payload: Vec<&'a [u8]>,
    queue: Vec<&'a str>,
    task: Vec<&'a str>,
    priority: Vec<i32>,
    run_at_micros: Vec<Option<i64>>,
    delay_ms: Vec<Option<i64>>,
    max_attempts: Vec<i32>,
    retry_initial_ms: Vec<i64>,
    retry_max_ms: Vec<i64>,
    retry_multiplier: Vec<f64>,
    retry_jitter: Vec<f64>,
    timeout_ms: Vec<Option<i64>>,
    /// JSON arrays, sorted and without repeats.
    tags: Vec<String>,
    key_retention_ms: Vec<Option<i64>>,
}

impl<'a> Columns<'a> {
    pub fn of(entries: impl ExactSizeIterator<Item = &'a JobRequest>) -> Columns<'a> {
        let n = entries.len();
        let mut c = Columns {
            payload: Vec::with_capacity(n),
            queue: Vec::with_capacity(n),
            task: Vec::with_capacity(n),
            priority: Vec::with_capacity(n),
            run_at_micros: Vec::with_capacity(n),
            delay_ms: Vec::with_capacity(n),
            max_attempts: Vec::with_capacity(n),
            retry_initial_ms: Vec::with_capacity(n),
            retry_max_ms: Vec::with_capacity(n),
            retry_multiplier: Vec::with_capacity(n),
            retry_jitter: Vec::with_capacity(n),
            timeout_ms: Vec::with_capacity(n),
            tags: Vec::with_capacity(n),
            key_retention_ms: Vec::with_capacity(n),
        };
        for r in entries {
            c.payload.push(&r.payload);
            c.queue.push(&r.queue);
            c.task.push(&r.task);
            c.priority.push(r.priority);
            let (at, delay) = match r.schedule {
                Schedule::Immediate => (None, None),
                Schedule::At { micros } => (Some(micros), None),
                Schedule::Delay { millis } => (None, Some(millis)),
            };
            c.run_at_micros.push(at);
            c.delay_ms.push(delay);
            c.max_attempts.push(r.max_attempts);
            c.retry_initial_ms.push(r.retry.initial_ms);
            c.retry_max_ms.push(r.retry.max_ms);
            c.retry_multiplier.push(r.retry.multiplier);
            c.retry_jitter.push(r.retry.jitter);
            c.timeout_ms.push(r.timeout_ms);
            c.tags
                .push(serde_json::to_string(&r.sorted_tags()).unwrap_or_else(|_| "[]".into()));
            c.key_retention_ms.push(r.key_retention_ms);
        }
        c
    }

    /// Binds the columns as the statement's first fourteen parameters.
    pub fn bind<'q>(
        &'q self,
        query: Query<'q, Postgres, PgArguments>,
    ) -> Query<'q, Postgres, PgArguments> {
        query
            .bind(&self.payload)
            .bind(&self.queue)
            .bind(&self.task)
            .bind(&self.priority)
            .bind(&self.run_at_micros)
            .bind(&self.delay_ms)
            .bind(&self.max_attempts)
            .bind(&self.retry_initial_ms)
            .bind(&self.retry_max_ms)
            .bind(&self.retry_multiplier)
            .bind(&self.retry_jitter)
            .bind(&self.timeout_ms)
            .bind(&self.tags)
            .bind(&self.key_retention_ms)
    }
}

/// A batch with keys, one entry per key, as `enqueue_keyed` takes it.
pub(crate) struct KeyedBatch<'a> {
    /// The input index of each entry sent, in the order sent: keyed entries by scope and
    /// digest (so that racing batches take their keys in the same order), then unkeyed ones.
    pub sent: Vec<usize>,
    /// For each input entry, the position in `sent` of the entry that carries its key (its
    /// own, unless an earlier entry used the same key).
    pub resolves_to: Vec<usize>,
    pub columns: Columns<'a>,
    pub scopes: Vec<&'a str>,
    pub digests: Vec<Option<Vec<u8>>>,
    pub previews: Vec<Option<String>>,
    /// For each entry sent, its rank in input order (from 1): new jobs take ids in that order.
    pub id_ranks: Vec<i32>,
}

impl<'a> KeyedBatch<'a> {
    /// Groups entries by key. Fails when a key is used again for a different request.
    pub fn group(entries: &'a [JobRequest]) -> Result<KeyedBatch<'a>, Box<Conflict>> {
        let digests: Vec<Option<Vec<u8>>> = entries
            .iter()
            .map(|r| r.key.as_deref().map(keys::digest))
            .collect();
        // For each input entry, the first entry using its key.
        let mut first_use: HashMap<(&str, &[u8]), usize> = HashMap::new();
        let mut first = Vec::with_capacity(entries.len());
        for (i, r) in entries.iter().enumerate() {
            let Some(digest) = &digests[i] else {
                first.push(i);
                continue;
            };
            let earlier = *first_use.entry((r.scope.as_str(), digest)).or_insert(i);
            if earlier != i && entries[earlier].fingerprint() != r.fingerprint() {
                return Err(Box::new(Conflict {
                    index: i,
                    job_id: None,
                    batch_index: Some(earlier),
                    key_preview: r.key.as_deref().map(keys::preview).unwrap_or_default(),
                    key_digest: keys::hex(digest),
                    fields: differing_fields(
                        &entries[earlier].fingerprint().to_value(),
                        &r.fingerprint().to_value(),
                    ),
                }));
            }
            first.push(earlier);
        }
        let mut sent: Vec<usize> = (0..entries.len()).filter(|&i| first[i] == i).collect();
        let id_rank: HashMap<usize, i32> =
            sent.iter().zip(1..).map(|(&i, rank)| (i, rank)).collect();
        sent.sort_by(|&a, &b| {
            let order = |i: usize| (digests[i].is_none(), entries[i].scope.as_str(), &digests[i]);
            order(a).cmp(&order(b))
        });
        let mut position = vec![0; entries.len()];
        for (p, &i) in sent.iter().enumerate() {
            position[i] = p;
        }
        Ok(KeyedBatch {
            resolves_to: first.iter().map(|&f| position[f]).collect(),
            columns: Columns::of(sent.iter().map(|&i| &entries[i])),
            scopes: sent.iter().map(|&i| entries[i].scope.as_str()).collect(),
            previews: sent
                .iter()
                .map(|&i| entries[i].key.as_deref().map(keys::preview))
                .collect(),
            id_ranks: sent.iter().map(|i| id_rank[i]).collect(),
            digests: sent.iter().map(|&i| digests[i].clone()).collect(),
            sent,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyed(key: &str, payload: &str) -> JobRequest {
        JobRequest::new("t", payload.as_bytes().to_vec()).with_key(key)
    }

    #[test]
    fn a_repeated_key_is_sent_once_and_both_entries_resolve_to_it() {
        let entries = [
            keyed("b", "{}"),
            keyed("a", "{}"),
            keyed("b", "{}"),
            JobRequest::new("t", b"{}".to_vec()),
        ];
        let batch = KeyedBatch::group(&entries).expect("no conflict");
        assert_eq!(batch.sent.len(), 3);
        assert_eq!(batch.resolves_to[0], batch.resolves_to[2]);
        assert_eq!(batch.sent[batch.resolves_to[0]], 0);
        assert_eq!(batch.sent.last(), Some(&3), "unkeyed entries go last");
    }

    #[test]
    fn keys_are_sent_in_digest_order_and_ids_follow_input_order() {
        let entries: Vec<JobRequest> = (0..20).map(|k| keyed(&format!("k{k}"), "{}")).collect();
        let batch = KeyedBatch::group(&entries).expect("no conflict");
        let sent_digests: Vec<&Vec<u8>> = batch.digests.iter().flatten().collect();
        assert!(sent_digests.windows(2).all(|w| w[0] < w[1]));
        for (p, &i) in batch.sent.iter().enumerate() {
            assert_eq!(batch.id_ranks[p], i as i32 + 1);
        }
    }

    #[test]
    fn a_key_reused_for_a_different_request_names_both_entries_and_the_fields() {
        let entries = [keyed("a", "{}"), keyed("x", "{}"), keyed("a", "[]")];
        let conflict = KeyedBatch::group(&entries).err().expect("conflict");
        assert_eq!(
            (conflict.index, conflict.batch_index, conflict.job_id),
            (2, Some(0), None)
        );
        assert_eq!(conflict.fields, ["payload"]);
    }
}
