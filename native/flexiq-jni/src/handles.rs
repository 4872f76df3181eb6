//! Handle tables: Java holds a `long`, native code holds the object. A handle that was never
//! issued, or was closed, finds nothing (an `IllegalStateException` in Java), never freed memory.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};

use flexiq_jni_shell::errors::{BridgeError, BridgeResult};

/// Objects of one kind, by handle.
pub struct Handles<T> {
    kind: &'static str,
    next: AtomicI64,
    live: RwLock<HashMap<i64, Arc<T>>>,
}

impl<T> Handles<T> {
    /// An empty table; `kind` names the objects in error messages.
    pub fn new(kind: &'static str) -> Handles<T> {
        Handles {
            kind,
            next: AtomicI64::new(1),
            live: RwLock::new(HashMap::new()),
        }
    }

    /// Stores `value` and returns its new handle.
    pub fn insert(&self, value: T) -> i64 {
        let handle = self.next.fetch_add(1, Ordering::Relaxed);
        let mut live = self.live.write().unwrap_or_else(|p| p.into_inner());
        live.insert(handle, Arc::new(value));
        handle
    }

    /// The object behind `handle`; calls already running keep it alive after a close.
    pub fn get(&self, handle: i64) -> BridgeResult<Arc<T>> {
        let live = self.live.read().unwrap_or_else(|p| p.into_inner());
        live.get(&handle)
            .cloned()
            .ok_or(BridgeError::Closed(self.kind))
    }

    /// Removes `handle`; the object is dropped once no running call holds it. Idempotent.
    pub fn remove(&self, handle: i64) -> Option<Arc<T>> {
        let mut live = self.live.write().unwrap_or_else(|p| p.into_inner());
        live.remove(&handle)
    }
}
