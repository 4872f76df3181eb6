//! The one shape of every FlexiQ native method: `static native byte[] name(long handle, byte[]
//! request)`. The request and the response are each one compact binary message ([`wire`]); the
//! entry shell ([`native`]) reads the request, runs the call, catches panics, maps errors
//! ([`errors`]) and writes the response. Natives are registered by name and signature when the
//! library loads ([`native::register_on_load`]), so a library that does not fit its Java class
//! fails there, not at a first call.
//!
//! This crate is shared by the shipped library (`flexiq-jni`) and the test library
//! (`flexiq-jni-test`), so that the panic barrier is tested in the very shell that ships.
#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod errors;
pub mod native;
pub mod upcall;
pub mod wire;

// The `natives!` macro names jni items through this crate, so callers need no matching version.
pub use jni;
