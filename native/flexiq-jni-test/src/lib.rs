//! Natives for `io.flexiq.internal.PanicProbe`, a Java test class, running in the same shell as
//! the shipped natives. They live here so that the shipped library holds no test entry point.
#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::c_void;

use flexiq_jni_shell::errors::BridgeResult;
use flexiq_jni_shell::jni::sys::{jint, JavaVM};
use flexiq_jni_shell::native::Native;
use flexiq_jni_shell::natives;
use flexiq_jni_shell::wire::{Reader, Writer};

static NATIVES: &[Native] = natives! {
    "nativePanic" => panic_with,
};

/// `nativePanic(0, text message)` panics with `message`: the call must end in a
/// `FlexiQException`, never in a crashed JVM.
fn panic_with(_: i64, r: &mut Reader<'_>, _: &mut Writer) -> BridgeResult<()> {
    let message = r.text("message")?;
    panic!("{message}");
}

/// Binds the natives to `PanicProbe`.
///
/// # Safety
///
/// Called by the JVM only, with its own pointer.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn JNI_OnLoad(vm: *mut JavaVM, _reserved: *mut c_void) -> jint {
    // Safety: the JVM calls JNI_OnLoad with its own pointer, on the loading thread.
    unsafe {
        flexiq_jni_shell::native::register_on_load(vm, "io/flexiq/internal/PanicProbe", NATIVES)
    }
}
