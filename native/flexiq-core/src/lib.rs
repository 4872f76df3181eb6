//! FlexiQ's core: the cross-binding dedup key recipe, input validation and (later) every
//! PostgreSQL statement. Nothing in this crate knows about JNI; the bridge crate converts
//! arguments and maps [`Error`] to Java exceptions.

pub mod canonical;
pub mod error;
pub mod recipe;
pub mod validate;

pub use error::{Error, Result};
