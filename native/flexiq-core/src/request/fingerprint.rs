//! What a replay is compared on: the fields that make two enqueues "the same request", in the
//! shape of the request object PostgreSQL reports a holder's with (`request_of`), and the
//! option names of the fields that differ.

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{Flow, JobRequest, RetryPolicy, Schedule};
use crate::keys;

impl JobRequest {
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
    use crate::validate;
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
}
