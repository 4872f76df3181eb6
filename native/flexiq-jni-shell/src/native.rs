//! The shell every native method runs in, and the registration of natives when the library
//! loads.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

use jni::objects::{JByteArray, JClass};
use jni::strings::JNIString;
use jni::sys::{jint, jlong, JNI_ERR, JNI_VERSION_1_8};
use jni::{jni_str, Env, EnvUnowned, JavaVM, NativeMethod};

use crate::errors::{BridgeResult, ThrowMapped};
use crate::wire::{Reader, Writer};

/// The JNI signature of every FlexiQ native: `static native byte[] name(long handle, byte[]
/// request)`. The handle is 0 for calls that need none.
pub const SIGNATURE: &str = "(J[B)[B";

/// The Rust function behind every native, the one shape [`SIGNATURE`] binds to.
pub type NativeFn = for<'local> extern "system" fn(
    EnvUnowned<'local>,
    JClass<'local>,
    jlong,
    JByteArray<'local>,
) -> JByteArray<'local>;

/// One native method: its Java name and its function.
pub struct Native {
    pub name: &'static str,
    pub function: NativeFn,
}

/// A table of natives, each an `extern "system"` function that runs its call in [`run`]:
/// `natives! { "nativeName" => call, … }` where `call` is an
/// `FnOnce(i64, &mut Reader, &mut Writer) -> BridgeResult<()>`.
#[macro_export]
macro_rules! natives {
    ($($name:literal => $call:expr,)*) => {
        &[$(
            $crate::native::Native {
                name: $name,
                function: {
                    extern "system" fn entry<'local>(
                        unowned: $crate::jni::EnvUnowned<'local>,
                        _class: $crate::jni::objects::JClass<'local>,
                        handle: $crate::jni::sys::jlong,
                        request: $crate::jni::objects::JByteArray<'local>,
                    ) -> $crate::jni::objects::JByteArray<'local> {
                        $crate::native::run(unowned, handle, request, $call)
                    }
                    entry
                },
            },
        )*]
    };
}

/// Runs one native call: reads the request, runs `call` on it, checks that the call read the
/// whole request and returns what it wrote (null when it wrote nothing). A panic becomes a
/// `FlexiQException` and an error its Java exception (see [`ThrowMapped`]).
pub fn run<'local>(
    mut unowned: EnvUnowned<'local>,
    handle: jlong,
    request: JByteArray<'local>,
    call: impl FnOnce(i64, &mut Reader<'_>, &mut Writer) -> BridgeResult<()>,
) -> JByteArray<'local> {
    unowned
        .with_env(|env| -> BridgeResult<JByteArray<'local>> {
            let bytes = if request.is_null() {
                Vec::new()
            } else {
                env.convert_byte_array(&request)?
            };
            let mut reader = Reader::new(&bytes);
            let mut writer = Writer::new();
            call(handle, &mut reader, &mut writer)?;
            reader.finish()?;
            if writer.is_empty() {
                Ok(JByteArray::null())
            } else {
                Ok(env.byte_array_from_slice(writer.as_bytes())?)
            }
        })
        .resolve::<ThrowMapped>()
}

/// What `JNI_OnLoad` does: binds `natives` to the static native methods of `class` (slashed
/// name, `io/flexiq/internal/NativeBridge`) and returns the JNI version. When the class does not
/// declare one of them with [`SIGNATURE`], loading fails with an `UnsatisfiedLinkError` naming
/// the method, rather than a first call failing later.
///
/// # Safety
///
/// `vm` is the pointer the JVM passed to `JNI_OnLoad`, on the thread that is loading the library.
pub unsafe fn register_on_load(vm: *mut jni::sys::JavaVM, class: &str, natives: &[Native]) -> jint {
    if vm.is_null() {
        return JNI_ERR;
    }
    // Safety: the caller passes the JVM's own pointer.
    let vm = unsafe { JavaVM::from_raw(vm) };
    let registered = catch_unwind(AssertUnwindSafe(|| {
        vm.with_top_local_frame(|env| -> jni::errors::Result<bool> {
            Ok(
                match register(env, class, natives)
                    .and_then(|()| crate::upcall::keep_bridge(env, class))
                {
                    Ok(()) => true,
                    Err(e) => {
                        // The JVM rethrows a pending exception from System.load.
                        env.exception_clear();
                        let message = format!(
                            "FlexiQ's native library does not fit the Java class {}: {e}. The jar \
                         and the native library come from different builds: use the library \
                         that ships in the same jar",
                            class.replace('/', ".")
                        );
                        env.throw_new(
                            jni_str!("java/lang/UnsatisfiedLinkError"),
                            JNIString::from(message),
                        )
                        .or_else(|e| match e {
                            jni::errors::Error::JavaException => Ok(()),
                            other => Err(other),
                        })?;
                        false
                    }
                },
            )
        })
    }));
    match registered {
        Ok(Ok(true)) => JNI_VERSION_1_8,
        _ => JNI_ERR,
    }
}

fn register(env: &mut Env<'_>, class: &str, natives: &[Native]) -> jni::errors::Result<()> {
    let signature = JNIString::from(SIGNATURE);
    let names: Vec<JNIString> = natives.iter().map(|n| JNIString::from(n.name)).collect();
    let methods: Vec<NativeMethod<'_>> = natives
        .iter()
        .zip(&names)
        .map(|(native, name)| {
            // Safety: every `NativeFn` is a static method taking (long, byte[]) and returning
            // byte[], which is what `SIGNATURE` says.
            unsafe {
                NativeMethod::from_raw_parts(name, &signature, native.function as *mut c_void)
            }
        })
        .collect();
    // Safety: as above; the class argument is a JClass because every native is static.
    unsafe { env.register_native_methods(JNIString::from(class), &methods) }
}
