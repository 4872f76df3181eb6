//! Argument conversion from Java values to Rust values. A null reference is a bad argument.

use jni::objects::{JByteArray, JString};
use jni::Env;

use crate::errors::{BridgeError, BridgeResult};

pub(crate) fn string_arg(
    env: &Env<'_>,
    value: &JString<'_>,
    name: &'static str,
) -> BridgeResult<String> {
    if value.is_null() {
        return Err(BridgeError::NullArgument(name));
    }
    Ok(value.try_to_string(env)?)
}

pub(crate) fn bytes_arg(
    env: &Env<'_>,
    value: &JByteArray<'_>,
    name: &'static str,
) -> BridgeResult<Vec<u8>> {
    if value.is_null() {
        return Err(BridgeError::NullArgument(name));
    }
    Ok(env.convert_byte_array(value)?)
}
