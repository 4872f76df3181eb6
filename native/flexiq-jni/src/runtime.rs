//! The one tokio runtime of the process. Java threads call in and run their own future on their
//! own thread, as callers (`flexiq_core::caller`): a statement's socket is waited on by the Java
//! thread that sent it; the runtime's workers drive timers, wake-ups and announcements.
//! No JVM thread is attached by FlexiQ: Java calls in, native code never calls back.

use std::future::Future;
use std::sync::LazyLock;

use tokio::runtime::{Builder, Runtime};

static RUNTIME: LazyLock<std::io::Result<Runtime>> = LazyLock::new(|| {
    Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("flexiq-io")
        .enable_all()
        .build()
});

/// Runs `future` to completion on the calling (Java) thread.
pub fn block_on<F: Future>(future: F) -> Result<F::Output, flexiq_jni_shell::errors::BridgeError> {
    match &*RUNTIME {
        Ok(runtime) => Ok(flexiq_core::caller::block_on(runtime.handle(), future)),
        Err(e) => Err(flexiq_jni_shell::errors::BridgeError::Runtime(
            e.to_string(),
        )),
    }
}
