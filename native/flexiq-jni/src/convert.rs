//! Argument conversion from Java values to Rust values. A null reference is a bad argument
//! unless the parameter says it may be null.

use jni::objects::{
    IntoAuto, JByteArray, JDoubleArray, JIntArray, JLongArray, JObjectArray, JString,
};
use jni::Env;

use crate::errors::{BridgeError, BridgeResult};

pub(crate) fn string_arg(
    env: &Env<'_>,
    value: &JString<'_>,
    name: &'static str,
) -> BridgeResult<String> {
    optional_string_arg(env, value, name)?.ok_or(BridgeError::NullArgument(name))
}

/// Reads a Java string exactly. One that is not valid UTF-16 (it holds an unpaired surrogate)
/// is refused: converting it with replacement characters would turn different keys or names
/// into one.
pub(crate) fn optional_string_arg(
    env: &Env<'_>,
    value: &JString<'_>,
    name: &'static str,
) -> BridgeResult<Option<String>> {
    if value.is_null() {
        return Ok(None);
    }
    let chars = value.mutf8_chars(env)?;
    match simd_cesu8::mutf8::decode(chars.to_bytes()) {
        Ok(text) => Ok(Some(text.into_owned())),
        Err(_) => Err(BridgeError::BadArgument(format!(
            "{name} is not valid UTF-16: it holds an unpaired surrogate"
        ))),
    }
}

/// Reads free text (an error message to store) that may hold unpaired surrogates, replacing
/// them: nothing is keyed or looked up by it.
pub(crate) fn text_arg(
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

/// Reads a whole primitive array, checking that it has `len` elements.
macro_rules! primitive_array_arg {
    ($fn_name:ident, $array:ident, $elem:ty) => {
        pub(crate) fn $fn_name(
            env: &Env<'_>,
            array: &$array<'_>,
            len: usize,
            name: &'static str,
        ) -> BridgeResult<Vec<$elem>> {
            if array.is_null() {
                return Err(BridgeError::NullArgument(name));
            }
            check_len(array.len(env)?, len, name)?;
            let mut out = vec![<$elem>::default(); len];
            array.get_region(env, 0, &mut out)?;
            Ok(out)
        }
    };
}

primitive_array_arg!(long_array_arg, JLongArray, i64);
primitive_array_arg!(int_array_arg, JIntArray, i32);
primitive_array_arg!(double_array_arg, JDoubleArray, f64);

fn check_len(actual: usize, expected: usize, name: &'static str) -> BridgeResult<()> {
    if actual != expected {
        return Err(BridgeError::BadArgument(format!(
            "{name} has {actual} entries, expected {expected}"
        )));
    }
    Ok(())
}

/// Reads a `String[]` whose entries may be null; local references are freed as they are read,
/// so a batch of any size stays within the JNI frame's capacity. A batch with uniform options
/// repeats one `String` instance down a column, so an entry that is the same object as the
/// one before it is not decoded again.
pub(crate) fn string_array_arg(
    env: &mut Env<'_>,
    array: &JObjectArray<'_, JString<'_>>,
    len: usize,
    name: &'static str,
) -> BridgeResult<Vec<Option<String>>> {
    if array.is_null() {
        return Err(BridgeError::NullArgument(name));
    }
    check_len(array.len(env)?, len, name)?;
    let mut out: Vec<Option<String>> = Vec::with_capacity(len);
    let mut previous = None;
    for i in 0..len {
        let element = array.get_element(env, i)?.auto();
        let repeated = match (&previous, out.last()) {
            (Some(p), Some(last)) if env.is_same_object(p, &element)? => Some(last.clone()),
            _ => None,
        };
        let value = match repeated {
            Some(value) => value,
            None => optional_string_arg(env, &element, name)?,
        };
        out.push(value);
        previous = Some(element);
    }
    Ok(out)
}

/// Reads a `byte[][]` with no null entries.
pub(crate) fn bytes_array_arg(
    env: &mut Env<'_>,
    array: &JObjectArray<'_, JByteArray<'_>>,
    name: &'static str,
) -> BridgeResult<Vec<Vec<u8>>> {
    if array.is_null() {
        return Err(BridgeError::NullArgument(name));
    }
    let len = array.len(env)?;
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        let element = array.get_element(env, i)?.auto();
        out.push(bytes_arg(env, &element, name)?);
    }
    Ok(out)
}
