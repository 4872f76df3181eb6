//! One job to enqueue, as every binding hands it to the core: the resolved key (if any), the
//! serialized payload and the plain job options.

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::keys;
use crate::validate;

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

    /// What a replay is compared on: every field that makes two enqueues "the same request".
    /// Unset options are absent, not null.
    pub(crate) fn fingerprint(&self) -> Fingerprint<'_> {
        let (run_at_micros, delay_ms) = match self.schedule {
            Schedule::Immediate => (None, None),
            Schedule::At { micros } => (Some(micros), None),
            Schedule::Delay { millis } => (None, Some(millis)),
        };
        Fingerprint {
            queue: &self.queue,
            task: &self.task,
            payload_sha256: match &self.encoded {
                Some(e) => keys::hex(&e.digest),
                None => keys::hex(&Sha256::digest(&self.payload)),
            },
            priority: self.priority,
            run_at_micros,
            delay_ms,
            max_attempts: self.max_attempts,
            retry_policy: self.retry,
            timeout_ms: self.timeout_ms,
            tags: self.sorted_tags(),
            key_retention_ms: self.key_retention_ms,
            flow: &self.flow,
        }
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

/// The fields a replay is compared on, in the shape of the request object PostgreSQL reports a
/// holder's with (`request_of`).
#[derive(Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Fingerprint<'a> {
    queue: &'a str,
    task: &'a str,
    payload_sha256: String,
    priority: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_at_micros: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delay_ms: Option<i64>,
    max_attempts: i32,
    retry_policy: RetryPolicy,
    #[serde(skip_serializing_if = "Option::is_none")]
    timeout_ms: Option<i64>,
    tags: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key_retention_ms: Option<i64>,
    #[serde(flatten)]
    flow: &'a Flow,
}

impl Fingerprint<'_> {
    /// The JSON value, for naming differing fields.
    pub(crate) fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The option names of the fingerprint fields that differ between two request objects.
pub(crate) fn differing_fields(accepted: &Value, requested: &Value) -> Vec<String> {
    let empty = serde_json::Map::new();
    let a = accepted.as_object().unwrap_or(&empty);
    let b = requested.as_object().unwrap_or(&empty);
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    let mut fields: Vec<String> = names
        .into_iter()
        .filter(|n| !same_json(a.get(*n), b.get(*n)))
        .map(|n| option_name(n).to_owned())
        .collect();
    // A concurrency key and its limit are one option.
    fields.dedup();
    fields
}

/// jsonb may print 2.0 as 2: numbers compare by value, integers exactly (microseconds in the
/// year 9999 are beyond what a double tells apart).
fn same_json(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            x.len() == y.len() && x.iter().all(|(k, v)| same_json(Some(v), y.get(k)))
        }
        (a, b) => a == b,
    }
}

fn option_name(field: &str) -> &str {
    match field {
        "payloadSha256" => "payload",
        "runAtMicros" => "runAt",
        "delayMs" => "delay",
        "timeoutMs" => "timeout",
        "keyRetentionMs" => "keyRetention",
        "deadlineMicros" => "deadline",
        "debounceMs" => "debounce",
        "maxWaitMs" => "maxWait",
        "concurrencyLimit" => "concurrencyKey",
        "throttleMs" => "throttle",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immediate_schedule_is_absent_from_the_fingerprint() {
        let f = JobRequest::new("t", b"{}".to_vec())
            .fingerprint()
            .to_value();
        assert!(f.get("runAtMicros").is_none() && f.get("delayMs").is_none());
    }

    #[test]
    fn tag_order_does_not_matter() {
        let mut a = JobRequest::new("t", b"{}".to_vec());
        a.tags = vec!["b".into(), "a".into()];
        let mut b = a.clone();
        b.tags = vec!["a".into(), "b".into(), "a".into()];
        assert_eq!(a.fingerprint(), b.fingerprint());
    }

    #[test]
    fn differing_fields_use_option_names() {
        let a = JobRequest::new("t", b"{}".to_vec());
        let mut b = a.clone();
        b.payload = b"[]".to_vec();
        b.priority = 3;
        b.schedule = Schedule::Delay { millis: 5 };
        assert_eq!(
            differing_fields(&a.fingerprint().to_value(), &b.fingerprint().to_value()),
            ["delay", "payload", "priority"]
        );
    }

    #[test]
    fn due_times_a_microsecond_apart_differ_even_in_the_year_9999() {
        let mut a = JobRequest::new("t", b"{}".to_vec());
        a.schedule = Schedule::At {
            micros: validate::MAX_RUN_AT_MICROS,
        };
        let mut b = a.clone();
        b.schedule = Schedule::At {
            micros: validate::MAX_RUN_AT_MICROS - 1,
        };
        assert_eq!(
            differing_fields(&a.fingerprint().to_value(), &b.fingerprint().to_value()),
            ["runAt"]
        );
    }

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
