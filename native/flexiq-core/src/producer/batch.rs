//! A batch as PostgreSQL takes it: one array per job column. And, for a batch with keys, the
//! grouping of entries by key that happens before anything is sent: one entry per key goes
//! to PostgreSQL, and a key used twice for different requests is refused here.

use std::collections::HashMap;

use crate::error::Conflict;
use crate::keys;
use crate::request::fields::{self, Entry};
use crate::request::{differing_fields, JobRequest};
use crate::statement::Param;

/// Some entries as the enqueue statements take them: one array per parameter of the request's
/// fields (see `request::fields`).
pub(crate) struct Columns<'a> {
    entries: Vec<Entry<'a>>,
}

impl<'a> Columns<'a> {
    /// The columns of entries without keys.
    pub fn of(entries: impl Iterator<Item = &'a JobRequest>) -> Columns<'a> {
        Columns {
            entries: entries.map(|r| Entry::new(r, None)).collect(),
        }
    }

    /// The statement's parameters of the request's fields, in order.
    pub fn params(&self) -> Vec<Param<'_>> {
        fields::params().map(|p| p.column(&self.entries)).collect()
    }
}

/// A batch with keys, one entry per key, as `resolve_keyed.sql` takes it.
pub(crate) struct KeyedBatch<'a> {
    /// The input index of each entry sent, in the order sent: keyed entries by scope and
    /// digest (so that racing batches take their keys in the same order), then unkeyed ones.
    pub sent: Vec<usize>,
    /// For each input entry, the position in `sent` of the entry that carries its key (its
    /// own, unless an earlier entry used the same key).
    pub resolves_to: Vec<usize>,
    columns: Columns<'a>,
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
            columns: Columns {
                entries: sent
                    .iter()
                    .map(|&i| Entry::new(&entries[i], digests[i].clone()))
                    .collect(),
            },
            id_ranks: sent.iter().map(|i| id_rank[i]).collect(),
            sent,
        })
    }

    /// The parameters of the request's fields, then each entry's rank (unless `ranked` is
    /// false: `insert_jobs.sql` and a debounced or throttled job take none).
    pub fn params(&self, ranked: bool) -> Vec<Param<'_>> {
        let mut params = self.columns.params();
        if ranked {
            params.push(Param::Int4(
                self.id_ranks.iter().map(|&r| Some(r)).collect(),
            ));
        }
        params
    }

    /// The digest of each entry sent, `None` for those without a key.
    pub fn digests(&self) -> impl Iterator<Item = Option<&[u8]>> + '_ {
        self.columns.entries.iter().map(|e| e.key_digest.as_deref())
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
        let sent_digests: Vec<&[u8]> = batch.digests().flatten().collect();
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
