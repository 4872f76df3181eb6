//! Calls run to completion on the calling thread, for callers that block until a call ends
//! (a Java thread inside a native method).
//!
//! A thread that waits in a runtime's `block_on` does not read its own sockets: the runtime's
//! threads do, and wake it. Each round trip then takes two wake-ups, and on a small machine the
//! switches cost more than the statement. So a call run by [`block_on`] marks its thread as a
//! caller, and the pool gives such a thread connections it drives itself: each has a
//! single-threaded runtime of its own, whose `block_on` the caller runs while the statement is on
//! its way, waiting on the socket as a blocking driver does (see the `pool` module).
//!
//! Everything else a call awaits (a lane, a timer, a wake-up) is still driven by the runtime
//! whose handle is given, which the call enters.

use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

use tokio::runtime::Handle;

thread_local! {
    static CALLER: Cell<bool> = const { Cell::new(false) };
}

/// Runs `future` on the calling thread, which sleeps whenever the future waits, within
/// `runtime`'s context (its timers, its spawned tasks). Must not be called from inside a runtime.
pub fn block_on<F: Future>(runtime: &Handle, future: F) -> F::Output {
    let _context = runtime.enter();
    let was_caller = CALLER.replace(true);
    let _restore = Restore(was_caller);
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        // A wake that came before this point left its token, so park returns at once.
        thread::park();
    }
}

/// Whether the current thread is inside [`block_on`], and may therefore block on a
/// connection's own runtime.
pub(crate) fn is_caller() -> bool {
    CALLER.get()
}

struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Puts the thread's caller mark back as it was, even when the future panics.
struct Restore(bool);

impl Drop for Restore {
    fn drop(&mut self) {
        CALLER.set(self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_call_is_a_caller_only_inside_block_on_and_uses_the_runtime_for_timers_and_tasks() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        assert!(!is_caller());
        let (inside, spawned) = block_on(runtime.handle(), async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            let spawned = tokio::spawn(async { is_caller() }).await.expect("task");
            (is_caller(), spawned)
        });
        assert!(inside, "the calling thread is a caller");
        assert!(!spawned, "the runtime's own threads are not");
        assert!(!is_caller(), "the mark ends with the call");
    }
}
