//! The auto-derived dedup key: the one recipe every binding shares.
//!
//! `auto:` followed by the first 32 lowercase hex characters of
//! `sha256(utf8(task_name) || 0x00 || payload)`, where `payload` is the serialized payload
//! before any payload codec runs (an encrypting codec must not change the key).

use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::validate;

/// The prefix that marks a key as derived rather than chosen by the caller.
pub const AUTO_KEY_PREFIX: &str = "auto:";

/// How many hex characters of the digest the key keeps (128 bits).
const AUTO_KEY_HEX_CHARS: usize = 32;

/// Derives the auto key of `task_name` and `payload` (the pre-codec serialized bytes).
pub fn auto_key(task_name: &str, payload: &[u8]) -> Result<String> {
    validate::task_name(task_name)?;
    let mut hasher = Sha256::new();
    hasher.update(task_name.as_bytes());
    // One NUL byte: task names cannot contain it, so the name can never run into the payload.
    hasher.update([0u8]);
    hasher.update(payload);
    let digest = hasher.finalize();
    let mut key = String::with_capacity(AUTO_KEY_PREFIX.len() + AUTO_KEY_HEX_CHARS);
    key.push_str(AUTO_KEY_PREFIX);
    for byte in &digest[..AUTO_KEY_HEX_CHARS / 2] {
        key.push(hex_digit(byte >> 4));
        key.push(hex_digit(byte & 0x0f));
    }
    Ok(key)
}

fn hex_digit(nibble: u8) -> char {
    char::from_digit(u32::from(nibble), 16).unwrap_or('0')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_has_prefix_and_32_lowercase_hex_characters() {
        let key = auto_key("charge_customer", br#"{"amount":1000}"#).expect("valid task");
        let hex = key.strip_prefix("auto:").expect("prefix");
        assert_eq!(hex.len(), 32);
        assert!(hex
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)));
    }

    #[test]
    fn separator_keeps_task_and_payload_apart() {
        // Without the NUL byte both would hash "ab" followed by "c".
        assert_ne!(
            auto_key("ab", b"c").expect("ok"),
            auto_key("a", b"bc").expect("ok")
        );
    }

    #[test]
    fn refuses_a_bad_task_name() {
        assert!(auto_key("", b"{}").is_err());
        assert!(auto_key("a\0b", b"{}").is_err());
    }
}
