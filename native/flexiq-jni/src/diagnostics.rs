//! An entry point that panics on purpose, so that the Java tests can prove the panic barrier.

use jni::objects::{JClass, JString};
use jni::EnvUnowned;

use crate::convert::text_arg;
use crate::errors::{BridgeResult, ThrowMapped};

/// `static native void nativePanicForTest(String message)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativePanicForTest<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    message: JString<'local>,
) {
    unowned
        .with_env(|env| -> BridgeResult<()> {
            let message = text_arg(env, &message, "message")?;
            panic!("{message}");
        })
        .resolve::<ThrowMapped>()
}
