//! The JNI bridge behind `io.flexiq.internal.NativeBridge`.
//!
//! Each entry point converts its arguments, calls `flexiq_core` and converts the result back.
//! Every entry runs inside `EnvUnowned::with_env`, which catches panics, and resolves through
//! [`errors::ThrowMapped`], the one place where Rust errors get their Java exception class.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod client;
mod convert;
mod diagnostics;
mod errors;
mod grants;
mod handles;
mod recipe;
mod runtime;
mod worker;
