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

/// The longest scope, queue or tag accepted, in bytes of UTF-8.
pub const MAX_NAME_BYTES: usize = 128;

/// Checks a scope, queue or tag (`what` names it in the message).
pub fn name(what: &str, value: &str) -> Result<()> {
    non_empty_bounded_without_nul(what, value, MAX_NAME_BYTES)
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
    fn task_name_limits() {
        assert_eq!(message(task_name("")), "task name must not be empty");
        assert!(task_name(&"t".repeat(256)).is_err());
        assert!(message(task_name("x\0")).contains("NUL"));
        assert!(task_name("données.traiter").is_ok());
    }
}
