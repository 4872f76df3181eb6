//! The one error type of the core. The JNI bridge maps each variant to one Java exception class.

/// Everything the core can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The caller passed something the core refuses before doing any work.
    #[error("{0}")]
    InvalidArgument(String),

    /// The payload bytes are not JSON that RFC 8785 can canonicalize.
    #[error("payload is not serializable as canonical JSON: {0}")]
    InvalidPayload(String),
}

/// Shorthand for results of the core.
pub type Result<T> = std::result::Result<T, Error>;
