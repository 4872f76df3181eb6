//! A batch as PostgreSQL takes it: one array per job column. And, for a batch with keys, the
//! grouping of entries by key that happens before anything is sent: one entry per key goes
//! to PostgreSQL, and a key used twice for different requests is refused here.

use std::collections::HashMap;

use crate::error::Conflict;
use crate::keys;
use crate::request::{differing_fields, JobRequest, Schedule};
use crate::statement::Param;

/// The job columns of some entries, as the statements take them ($1 to $17).
pub(crate) struct Columns<'a> {
    entries: Vec<&'a JobRequest>,
    /// JSON arrays, sorted and without repeats.
    tags: Vec<String>,
    /// JSON objects, or `None` where no flow option is set.
    flows: Vec<Option<String>>,
}

impl<'a> Columns<'a> {
    pub fn of(entries: impl Iterator<Item = &'a JobRequest>) -> Columns<'a> {
        let entries: Vec<&JobRequest> = entries.collect();
        let tags = entries
            .iter()
            .map(|r| serde_json::to_string(&r.sorted_tags()).unwrap_or_else(|_| "[]".into()))
            .collect();
        let flows = entries.iter().map(|r| r.flow.json()).collect();
        Columns {
            entries,
            tags,
            flows,
        }
    }

    /// The columns as the statement's first seventeen parameters.
    pub fn params(&self) -> Vec<Param<'_>> {
        let e = &self.entries;
        let schedule = |r: &JobRequest| match r.schedule {
            Schedule::Immediate => (None, None),
            Schedule::At { micros } => (Some(micros), None),
            Schedule::Delay { millis } => (None, Some(millis)),
        };
        vec![
            Param::Bytea(e.iter().map(|r| Some(r.stored_payload())).collect()),
            Param::Text(e.iter().map(|r| Some(r.queue.as_str())).collect()),
            Param::Text(e.iter().map(|r| Some(r.task.as_str())).collect()),
            Param::Int4(e.iter().map(|r| Some(r.priority)).collect()),
            Param::Int8(e.iter().map(|r| schedule(r).0).collect()),
            Param::Int8(e.iter().map(|r| schedule(r).1).collect()),
            Param::Int4(e.iter().map(|r| Some(r.max_attempts)).collect()),
            Param::Int8(e.iter().map(|r| Some(r.retry.initial_ms)).collect()),
            Param::Int8(e.iter().map(|r| Some(r.retry.max_ms)).collect()),
            Param::Float8(e.iter().map(|r| Some(r.retry.multiplier)).collect()),
            Param::Float8(e.iter().map(|r| Some(r.retry.jitter)).collect()),
            Param::Int8(e.iter().map(|r| r.timeout_ms).collect()),
            Param::Text(self.tags.iter().map(|t| Some(t.as_str())).collect()),
            Param::Int8(e.iter().map(|r| r.key_retention_ms).collect()),
            Param::Text(self.flows.iter().map(Option::as_deref).collect()),
            Param::Text(
                e.iter()
                    .map(|r| r.encoded.as_ref().map(|c| c.codec.as_str()))
                    .collect(),
            ),
            Param::Bytea(
                e.iter()
                    .map(|r| r.encoded.as_ref().map(|c| c.digest.as_slice()))
                    .collect(),
            ),
        ]
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
    columns: Columns<'a>,
    pub digests: Vec<Option<Vec<u8>>>,
    previews: Vec<Option<String>>,
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
            previews: sent
                .iter()
                .map(|&i| entries[i].key.as_deref().map(keys::preview))
                .collect(),
            id_ranks: sent.iter().map(|i| id_rank[i]).collect(),
            digests: sent.iter().map(|&i| digests[i].clone()).collect(),
            sent,
        })
    }

    /// The parameters of `enqueue_keyed`: the job columns, then each key's scope, digest and
    /// preview, and each entry's rank (unless `ranked` is false: a single debounced or throttled
    /// job has none).
    pub fn params(&self, ranked: bool) -> Vec<Param<'_>> {
        let mut params = self.columns.params();
        params.extend([
            Param::Text(
                self.columns
                    .entries
                    .iter()
                    .map(|r| Some(r.scope.as_str()))
                    .collect(),
            ),
            Param::Bytea(self.digests.iter().map(Option::as_deref).collect()),
            Param::Text(self.previews.iter().map(Option::as_deref).collect()),
        ]);
        if ranked {
            params.push(Param::Int4(
                self.id_ranks.iter().map(|&r| Some(r)).collect(),
            ));
        }
        params
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
