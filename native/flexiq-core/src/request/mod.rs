//! One job to enqueue, as every binding hands it to the core: the resolved key (if any), the
//! serialized payload and the plain job options.

pub mod fields;
mod fingerprint;
pub mod sql;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::validate;

pub(crate) use fingerprint::differing_fields;

/// When a job becomes due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// As soon as possible. Not part of the fingerprint, so a later replay matches.
    Immediate,
    /// At an explicit time, in microseconds since the Unix epoch.
    At { micros: i64 },
    /// A requested delay from acceptance, in milliseconds. Fingerprinted as the delay, not as
    /// the time it works out to, so that a replay of the same request matches.
    Delay { millis: i64 },
}

impl Schedule {
    /// Whether a job with this schedule, accepted at `now_micros`, is due at once. (A time
    /// the database's clock puts a little later only delays the job's wake-up to the next
    /// poll.)
    pub fn is_due(&self, now_micros: i64) -> bool {
        match *self {
            Schedule::Immediate => true,
            Schedule::At { micros } => micros <= now_micros,
            Schedule::Delay { millis } => millis == 0,
        }
    }
}

/// How long a failed job waits before its next attempt.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RetryPolicy {
    pub initial_ms: i64,
    pub max_ms: i64,
    pub multiplier: f64,
    pub jitter: f64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            initial_ms: 1_000,
            max_ms: 3_600_000,
            multiplier: 2.0,
            jitter: 0.1,
        }
    }
}

/// Flow control on one job: a deadline for its start, a concurrency key, and how repeats of its
/// key collapse (debounce or throttle; neither means a repeat replays or conflicts). Stored as a
/// JSON object of the fields set, and compared on replay like the job's options.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Flow {
    /// No attempt starts after this time (µs since the epoch); the job is dead-lettered instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline_micros: Option<i64>,
    /// The job starts only while fewer than `concurrency_limit` jobs of this key run, across
    /// every worker.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency_limit: Option<i32>,
    /// Debounce: the job is due this long after the latest request, which replaces a pending
    /// job holding the key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub debounce_ms: Option<i64>,
    /// Debounce: the longest a burst may postpone the job, from its first acceptance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_wait_ms: Option<i64>,
    /// Throttle: the key stays held this long from acceptance, and repeats inside that window
    /// coalesce onto the job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttle_ms: Option<i64>,
}

impl Flow {
    /// Whether repeats of the key collapse by debounce or throttle rather than replaying.
    pub fn collapses(&self) -> bool {
        self.debounce_ms.is_some() || self.throttle_ms.is_some()
    }

    /// The stored JSON object, or `None` when nothing is set.
    pub(crate) fn json(&self) -> Option<String> {
        (*self != Flow::default()).then(|| serde_json::to_string(self).unwrap_or_default())
    }
}

/// A payload as a binding's payload codec encoded it, stored in place of the serialized one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded {
    /// The codec's id, stored with the job: workers decode by it.
    pub codec: String,
    /// What the codec made of the serialized payload.
    pub bytes: Vec<u8>,
    /// The codec's digest of the serialized payload, which replays are compared by: two
    /// encodings of one payload may differ.
    pub digest: Vec<u8>,
}

/// The digest lengths accepted from a payload codec, in bytes (128 to 512 bits).
pub const CODEC_DIGEST_BYTES: std::ops::RangeInclusive<usize> = 16..=64;

/// One job to enqueue.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRequest {
    pub task: String,
    /// The serialized payload, before any codec: keys are derived from it.
    pub payload: Vec<u8>,
    /// What a payload codec made of `payload`, stored instead of it; `None` stores `payload`.
    pub encoded: Option<Encoded>,
    /// The resolved dedup key; `None` enqueues without dedup.
    pub key: Option<String>,
    pub scope: String,
    pub queue: String,
    pub priority: i32,
    pub schedule: Schedule,
    pub max_attempts: i32,
    pub retry: RetryPolicy,
    pub timeout_ms: Option<i64>,
    pub tags: Vec<String>,
    pub key_retention_ms: Option<i64>,
    pub flow: Flow,
    /// The trace context of the enqueuing span, as its propagator's carrier entries in a JSON
    /// object, stored with the job for its attempts' spans; outside the key and the fingerprint,
    /// so that a replay from another trace still replays.
    pub trace_context: Option<String>,
}

impl JobRequest {
    /// A request with the default options: no key, default scope and queue, due at once.
    pub fn new(task: impl Into<String>, payload: impl Into<Vec<u8>>) -> JobRequest {
        JobRequest {
            task: task.into(),
            payload: payload.into(),
            encoded: None,
            key: None,
            scope: "default".into(),
            queue: "default".into(),
            priority: 0,
            schedule: Schedule::Immediate,
            max_attempts: 20,
            retry: RetryPolicy::default(),
            timeout_ms: None,
            tags: Vec::new(),
            key_retention_ms: None,
            flow: Flow::default(),
            trace_context: None,
        }
    }

    /// The same request with a key.
    pub fn with_key(mut self, key: impl Into<String>) -> JobRequest {
        self.key = Some(key.into());
        self
    }

    /// Refuses what no binding may write.
    pub fn validate(&self) -> Result<()> {
        validate::task_name(&self.task)?;
        if let Some(key) = &self.key {
            validate::key(key)?;
        }
        if let Some(e) = &self.encoded {
            validate::codec_id(&e.codec)?;
            if !CODEC_DIGEST_BYTES.contains(&e.digest.len()) {
                return Err(Error::InvalidArgument(format!(
                    "the digest of payload codec {:?} must be {} to {} bytes, got {}",
                    e.codec,
                    CODEC_DIGEST_BYTES.start(),
                    CODEC_DIGEST_BYTES.end(),
                    e.digest.len()
                )));
            }
        }
        validate::payload_size(self.stored_payload().len())?;
        validate::name("scope", &self.scope)?;
        validate::name("queue", &self.queue)?;
        for tag in &self.tags {
            validate::name("tag", tag)?;
        }
        if self.max_attempts < 1 {
            return Err(Error::InvalidArgument(format!(
                "maxAttempts must be at least 1, got {}",
                self.max_attempts
            )));
        }
        match self.schedule {
            Schedule::Immediate => {}
            Schedule::At { micros } => validate::run_at(micros)?,
            Schedule::Delay { millis } => validate::stored_duration("delay", millis, 0)?,
        }
        if let Some(ms) = self.timeout_ms {
            validate::stored_duration("timeout", ms, 1)?;
        }
        if let Some(ms) = self.key_retention_ms {
            validate::stored_duration("keyRetention", ms, 0)?;
        }
        self.validate_flow()?;
        if let Some(context) = &self.trace_context {
            validate_trace_context(context)?;
        }
        let r = &self.retry;
        validate::stored_duration("retry initialDelay", r.initial_ms, 0)?;
        validate::stored_duration("retry maxDelay", r.max_ms, 0)?;
        if r.max_ms < r.initial_ms
            || !(r.multiplier >= 1.0 && r.multiplier.is_finite())
            || !(0.0..=1.0).contains(&r.jitter)
        {
            return Err(Error::InvalidArgument(format!(
                "retry policy is not valid: {r:?}"
            )));
        }
        Ok(())
    }

    fn validate_flow(&self) -> Result<()> {
        let f = &self.flow;
        if let Some(micros) = f.deadline_micros {
            validate::run_at(micros).map_err(|_| {
                Error::InvalidArgument(format!(
                    "deadline must be between 0001-01-01T00:00:00Z and \
                     9999-12-31T23:59:59.999999Z, got {micros} µs since the epoch"
                ))
            })?;
        }
        match (&f.concurrency_key, f.concurrency_limit) {
            (None, None) => {}
            (Some(key), Some(limit)) => {
                validate::name("concurrencyKey", key)?;
                if limit < 1 {
                    return Err(Error::InvalidArgument(format!(
                        "the limit of concurrency key {key:?} must be at least 1, got {limit}"
                    )));
                }
            }
            _ => {
                return Err(Error::InvalidArgument(
                    "a concurrency key and its limit go together".into(),
                ))
            }
        }
        if let Some(ms) = f.debounce_ms {
            validate::stored_duration("debounce", ms, 1)?;
        }
        if let Some(ms) = f.max_wait_ms {
            validate::stored_duration("maxWait", ms, 1)?;
        }
        if let Some(ms) = f.throttle_ms {
            validate::stored_duration("throttle", ms, 1)?;
        }
        let refuse = |m: &str| Err(Error::InvalidArgument(m.to_owned()));
        if f.debounce_ms.is_some() && f.throttle_ms.is_some() {
            return refuse("debounce and throttle exclude each other; choose one");
        }
        if f.max_wait_ms.is_some() && f.debounce_ms.is_none() {
            return refuse("maxWait bounds a debounce; set debounce too, or drop maxWait");
        }
        if !f.collapses() {
            return Ok(());
        }
        if self.key.is_none() {
            return refuse(
                "debounce and throttle collapse the requests of one key; give the job a key \
                 (uniqueKey or idempotencyKey)",
            );
        }
        if self.key_retention_ms.is_some() {
            return refuse(
                "keyRetention does not apply to debounce or throttle: a debounced key frees when \
                 its job finishes, a throttled one when its window closes",
            );
        }
        if f.debounce_ms.is_some() && self.schedule != Schedule::Immediate {
            return refuse(
                "a debounced job is due when its burst settles; drop runAt and delay, or drop \
                 debounce",
            );
        }
        Ok(())
    }

    /// The payload as stored: what its codec made of it, or else the serialized payload.
    pub(crate) fn stored_payload(&self) -> &[u8] {
        self.encoded.as_ref().map_or(&self.payload, |e| &e.bytes)
    }

    /// The tags as stored and compared: sorted, each once.
    pub(crate) fn sorted_tags(&self) -> Vec<&str> {
        let mut tags: Vec<&str> = self.tags.iter().map(String::as_str).collect();
        tags.sort_unstable();
        tags.dedup();
        tags
    }
}

/// The most bytes of a trace context: a W3C `traceparent` is 55, and `tracestate` at most 512.
const MAX_TRACE_CONTEXT_BYTES: usize = 4096;

/// Refuses a trace context that is not a JSON object of texts within the limit.
fn validate_trace_context(context: &str) -> Result<()> {
    let refused = |why: &str| {
        Err(Error::InvalidArgument(format!(
            "traceContext {why}: it must be a JSON object of texts (a propagator's carrier) of at most {MAX_TRACE_CONTEXT_BYTES} bytes"
        )))
    };
    if context.len() > MAX_TRACE_CONTEXT_BYTES {
        return refused(&format!("is {} bytes", context.len()));
    }
    match serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(context) {
        Ok(entries) if entries.values().all(serde_json::Value::is_string) => Ok(()),
        Ok(_) => refused("holds a value that is not a text"),
        Err(_) => refused("is not a JSON object"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_too_large_to_store_is_refused_after_its_codec() {
        let mut r = JobRequest::new("t", vec![b' '; validate::MAX_PAYLOAD_BYTES + 1]);
        assert!(matches!(r.validate(), Err(Error::InvalidPayload(_))));
        // What is stored counts: a codec's output, not the serialized payload it encoded.
        r.encoded = Some(Encoded {
            codec: "c".into(),
            bytes: vec![0; 16],
            digest: vec![0; 32],
        });
        r.validate().expect("the stored bytes fit");
        r.payload = b"{}".to_vec();
        r.encoded.as_mut().expect("encoded").bytes = vec![0; validate::MAX_PAYLOAD_BYTES + 1];
        assert!(matches!(r.validate(), Err(Error::InvalidPayload(_))));
    }

    #[test]
    fn a_trace_context_is_a_json_object_of_texts_within_its_limit() {
        let with = |context: &str| {
            let mut r = JobRequest::new("t", b"{}".to_vec());
            r.trace_context = Some(context.into());
            r.validate()
        };
        with(r#"{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}"#)
            .expect("a W3C carrier");
        with("{}").expect("an empty carrier");
        for refused in [
            "[]",
            r#"{"traceparent": 1}"#,
            "not json",
            &format!(r#"{{"t":"{}"}}"#, "x".repeat(MAX_TRACE_CONTEXT_BYTES)),
        ] {
            let e = with(refused).expect_err(refused).to_string();
            assert!(e.starts_with("traceContext "), "{e}");
            assert!(e.contains("JSON object of texts"), "{e}");
        }
    }

    #[test]
    fn validation_messages() {
        let mut r = JobRequest::new("t", b"{}".to_vec()).with_key("");
        assert_eq!(
            r.validate().expect_err("empty").to_string(),
            "key must not be empty"
        );
        r.key = None;
        r.schedule = Schedule::Delay { millis: -1 };
        assert_eq!(
            r.validate().expect_err("neg").to_string(),
            "delay must be between 0 and 36500 days, got -1 ms"
        );
        r.schedule = Schedule::At { micros: i64::MIN };
        assert!(r.validate().is_err());
        r.schedule = Schedule::Immediate;
        r.retry.max_ms = i64::MAX;
        assert_eq!(
            r.validate().expect_err("huge").to_string(),
            format!(
                "retry maxDelay must be between 0 and 36500 days, got {} ms",
                i64::MAX
            )
        );
    }
}
