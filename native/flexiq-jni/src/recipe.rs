//! Entry points for the key recipe and canonical JSON.

use jni::objects::{JByteArray, JClass, JString};
use jni::sys::jstring;
use jni::EnvUnowned;

use crate::convert::{bytes_arg, string_arg};
use crate::errors::{BridgeResult, ThrowMapped};

/// `static native byte[] nativeCanonicalJson(byte[] json)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeCanonicalJson<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    json: JByteArray<'local>,
) -> JByteArray<'local> {
    unowned
        .with_env(|env| -> BridgeResult<JByteArray<'local>> {
            let json = bytes_arg(env, &json, "json")?;
            let canonical = flexiq_core::canonical::canonicalize(&json)?;
            Ok(env.byte_array_from_slice(&canonical)?)
        })
        .resolve::<ThrowMapped>()
}

/// `static native String nativeAutoKey(String taskName, byte[] payload)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeAutoKey<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    task_name: JString<'local>,
    payload: JByteArray<'local>,
) -> jstring {
    unowned
        .with_env(|env| -> BridgeResult<jstring> {
            let task_name = string_arg(env, &task_name, "taskName")?;
            let payload = bytes_arg(env, &payload, "payload")?;
            let key = flexiq_core::recipe::auto_key(&task_name, &payload)?;
            Ok(env.new_string(key)?.into_raw())
        })
        .resolve::<ThrowMapped>()
}
