//! What PostgreSQL, logs and errors get to see of a key: its SHA-256 and a bounded preview.
//! The raw key never leaves the process.

use sha2::{Digest, Sha256};

/// The longest preview, in characters, before the ellipsis.
const PREVIEW_CHARS: usize = 8;

/// The SHA-256 of a key's UTF-8 bytes.
pub fn digest(key: &str) -> Vec<u8> {
    Sha256::digest(key.as_bytes()).to_vec()
}

/// Lowercase hex of some bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A preview that never shows a whole key: at most a third of its characters, at most eight,
/// followed by an ellipsis.
pub fn preview(key: &str) -> String {
    let shown = (key.chars().count() / 3).min(PREVIEW_CHARS);
    let mut out: String = key.chars().take(shown).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_never_shows_the_whole_key() {
        assert_eq!(preview("order-12345"), "ord…");
        assert_eq!(preview("ab"), "…");
        assert_eq!(
            preview("auto:0123456789abcdef0123456789abcdef"),
            "auto:012…"
        );
    }

    #[test]
    fn digest_is_sha256_of_utf8() {
        assert_eq!(
            hex(&digest("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
