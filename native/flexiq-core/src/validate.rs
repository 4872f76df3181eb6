//! Input limits shared by every binding. Each binding checks them before calling in; the core
//! checks them again so that no binding can write what another would refuse.

use crate::error::{Error, Result};

/// The longest key accepted, in bytes of UTF-8.
pub const MAX_KEY_BYTES: usize = 512;

/// The longest task name accepted, in bytes of UTF-8.
pub const MAX_TASK_NAME_BYTES: usize = 255;

/// Checks a dedup key (explicit or derived).
pub fn key(key: &str) -> Result<()> {
    non_empty_bounded_without_nul("key", key, MAX_KEY_BYTES)
}

/// The longest payload codec id accepted: as many ASCII characters.
pub const MAX_CODEC_ID_BYTES: usize = 64;

/// Checks the id a payload codec stores with each job it encodes: 1 to 64 of a-z, A-Z, 0-9,
/// `.`, `_` and `-`, so that it prints as it is wherever it is shown.
pub fn codec_id(id: &str) -> Result<()> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if id.is_empty() || id.len() > MAX_CODEC_ID_BYTES || !id.chars().all(allowed) {
        return Err(Error::InvalidArgument(format!(
            "payload codec id {id:?} must be 1 to {MAX_CODEC_ID_BYTES} characters of a-z, A-Z, \
             0-9, '.', '_' and '-'"
        )));
    }
    Ok(())
}

/// The largest payload accepted, in bytes as stored (after a codec). PostgreSQL takes at most
/// 1 GiB in one protocol message, and refuses a larger one by closing the connection, which
/// would read as an outage; a job queue's payload is rarely more than a reference to the data.
pub const MAX_PAYLOAD_BYTES: usize = 256 << 20;

/// The most payload bytes one statement carries (a batch, or single calls sent together): half
/// of PostgreSQL's 1 GiB message limit, which the rest of the statement's parameters must fit in.
pub const MAX_STATEMENT_PAYLOAD_BYTES: usize = 512 << 20;

/// Checks one payload's size as stored.
pub fn payload_size(bytes: usize) -> Result<()> {
    if bytes > MAX_PAYLOAD_BYTES {
        return Err(Error::InvalidPayload(format!(
            "the payload is {bytes} bytes as stored; the limit is {MAX_PAYLOAD_BYTES} (256 MiB): \
             store large data elsewhere and enqueue a reference to it"
        )));
    }
    Ok(())
}

/// Checks the payloads of one batch together, as stored.
pub fn batch_payload_size(bytes: usize) -> Result<()> {
    if bytes > MAX_STATEMENT_PAYLOAD_BYTES {
        return Err(Error::InvalidPayload(format!(
            "the batch's payloads are {bytes} bytes as stored; one enqueue takes at most \
             {MAX_STATEMENT_PAYLOAD_BYTES} (512 MiB): split the batch into smaller calls"
        )));
    }
    Ok(())
}

/// The longest scope, queue or tag accepted, in bytes of UTF-8.
pub const MAX_NAME_BYTES: usize = 128;

/// Checks a scope, queue or tag (`what` names it in the message).
pub fn name(what: &str, value: &str) -> Result<()> {
    non_empty_bounded_without_nul(what, value, MAX_NAME_BYTES)
}

/// The longest label a worker registers (its host, its name), in bytes.
pub const MAX_LABEL_BYTES: usize = 255;

/// Checks a label an operator reads: a worker's host or name.
pub fn label(what: &str, value: &str) -> Result<()> {
    non_empty_bounded_without_nul(what, value, MAX_LABEL_BYTES)
}

/// The longest role name PostgreSQL keeps, in bytes (it cuts longer identifiers short).
pub const MAX_ROLE_BYTES: usize = 63;

/// Checks the name of a PostgreSQL role.
pub fn role(name: &str) -> Result<()> {
    non_empty_bounded_without_nul("role name", name, MAX_ROLE_BYTES)
}

/// Checks a task name.
pub fn task_name(name: &str) -> Result<()> {
    non_empty_bounded_without_nul("task name", name, MAX_TASK_NAME_BYTES)
}

/// The longest duration a job keeps (delay, timeout, key retention, retry delays): 36500 days,
/// about 100 years, in milliseconds. PostgreSQL computes `now() + ms * interval '1 millisecond'`
/// through float8, exact up to 2^53 microseconds (about 285 years), so every allowed value lands
/// exactly, and a retry's jittered delay (up to twice the maximum) stays far from overflow.
pub const MAX_STORED_DURATION_MS: i64 = 36_500 * 24 * 60 * 60 * 1000;

/// The earliest `runAt`: 0001-01-01T00:00:00Z, in microseconds since the Unix epoch.
pub const MIN_RUN_AT_MICROS: i64 = -62_135_596_800_000_000;

/// The latest `runAt`: 9999-12-31T23:59:59.999999Z, in microseconds since the Unix epoch.
pub const MAX_RUN_AT_MICROS: i64 = 253_402_300_799_999_999;

/// Checks a duration a job keeps, in milliseconds: from `min_ms` to [`MAX_STORED_DURATION_MS`].
pub fn stored_duration(what: &str, ms: i64, min_ms: i64) -> Result<()> {
    if (min_ms..=MAX_STORED_DURATION_MS).contains(&ms) {
        return Ok(());
    }
    let min = if min_ms == 0 {
        "0".to_owned()
    } else {
        format!("{min_ms} ms")
    };
    Err(Error::InvalidArgument(format!(
        "{what} must be between {min} and 36500 days, got {ms} ms"
    )))
}

/// Checks a count (`what` names it in the message): from `min` to `max`.
pub fn count(what: &str, value: i32, min: i32, max: i32) -> Result<()> {
    if (min..=max).contains(&value) {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "{what} must be between {min} and {max}, got {value}"
    )))
}

/// Checks an explicit due time, in microseconds since the Unix epoch.
pub fn run_at(micros: i64) -> Result<()> {
    if (MIN_RUN_AT_MICROS..=MAX_RUN_AT_MICROS).contains(&micros) {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "runAt must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z, got \
         {micros} microseconds since 1970-01-01T00:00:00Z"
    )))
}

fn non_empty_bounded_without_nul(what: &str, value: &str, max_bytes: usize) -> Result<()> {
    if value.is_empty() {
        return Err(Error::InvalidArgument(format!("{what} must not be empty")));
    }
    if value.len() > max_bytes {
        return Err(Error::InvalidArgument(format!(
            "{what} is {} bytes of UTF-8; the limit is {max_bytes}",
            value.len()
        )));
    }
    if let Some(at) = value.bytes().position(|b| b == 0) {
        return Err(Error::InvalidArgument(format!(
            "{what} must not contain a NUL character (found at byte {at})"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(r: Result<()>) -> String {
        r.expect_err("refused").to_string()
    }

    #[test]
    fn payload_limits_count_bytes_as_stored() {
        assert!(payload_size(MAX_PAYLOAD_BYTES).is_ok());
        assert_eq!(
            message(payload_size(MAX_PAYLOAD_BYTES + 1)),
            "the payload is 268435457 bytes as stored; the limit is 268435456 (256 MiB): store \
             large data elsewhere and enqueue a reference to it"
        );
        assert!(batch_payload_size(MAX_STATEMENT_PAYLOAD_BYTES).is_ok());
        assert_eq!(
            message(batch_payload_size(MAX_STATEMENT_PAYLOAD_BYTES + 1)),
            "the batch's payloads are 536870913 bytes as stored; one enqueue takes at most \
             536870912 (512 MiB): split the batch into smaller calls"
        );
    }

    #[test]
    fn key_limits() {
        assert_eq!(message(key("")), "key must not be empty");
        assert_eq!(
            message(key(&"k".repeat(513))),
            "key is 513 bytes of UTF-8; the limit is 512"
        );
        assert!(key(&"k".repeat(512)).is_ok());
        // 171 three-byte characters are 513 bytes although only 171 chars.
        assert!(key(&"€".repeat(171)).is_err());
        assert_eq!(
            message(key("a\0b")),
            "key must not contain a NUL character (found at byte 1)"
        );
    }

    #[test]
    fn duration_and_time_ranges() {
        assert!(stored_duration("delay", 0, 0).is_ok());
        assert!(stored_duration("delay", MAX_STORED_DURATION_MS, 0).is_ok());
        assert_eq!(
            message(stored_duration("delay", MAX_STORED_DURATION_MS + 1, 0)),
            "delay must be between 0 and 36500 days, got 3153600000001 ms"
        );
        assert_eq!(
            message(stored_duration("timeout", 0, 1)),
            "timeout must be between 1 ms and 36500 days, got 0 ms"
        );
        assert!(run_at(MIN_RUN_AT_MICROS).is_ok() && run_at(MAX_RUN_AT_MICROS).is_ok());
        assert!(run_at(MIN_RUN_AT_MICROS - 1).is_err());
        assert!(message(run_at(i64::MAX)).starts_with(
            "runAt must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z, got"
        ));
    }

    #[test]
    fn task_name_limits() {
        assert_eq!(message(task_name("")), "task name must not be empty");
        assert!(task_name(&"t".repeat(256)).is_err());
        assert!(message(task_name("x\0")).contains("NUL"));
        assert!(task_name("données.traiter").is_ok());
    }
}
