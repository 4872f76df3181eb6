//! Error mapping: every Rust failure becomes exactly one Java exception class, here and only here.

use jni::errors::ErrorPolicy;
use jni::strings::JNIString;
use jni::Env;

/// What an entry point can fail with: the core's errors, or a failed JNI call.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    #[error(transparent)]
    Core(#[from] flexiq_core::Error),
    #[error("JNI call failed: {0}")]
    Jni(#[from] jni::errors::Error),
    #[error("{0} must not be null")]
    NullArgument(&'static str),
}

pub type BridgeResult<T> = Result<T, BridgeError>;

const ILLEGAL_ARGUMENT: &str = "java/lang/IllegalArgumentException";
const FLEXIQ: &str = "io/flexiq/FlexiQException";
const PAYLOAD: &str = "io/flexiq/PayloadSerializationException";

fn java_class_of(err: &BridgeError) -> &'static str {
    use flexiq_core::Error as Core;
    match err {
        BridgeError::Core(Core::InvalidArgument(_)) | BridgeError::NullArgument(_) => {
            ILLEGAL_ARGUMENT
        }
        BridgeError::Core(Core::InvalidPayload(_)) => PAYLOAD,
        BridgeError::Jni(_) => FLEXIQ,
    }
}

fn throw(env: &mut Env<'_>, class: &str, message: &str) -> jni::errors::Result<()> {
    let outcome = env.throw_new(JNIString::from(class), JNIString::from(message));
    match outcome {
        // throw_new reports the exception it just raised as an error; that is success here.
        Err(jni::errors::Error::JavaException) | Ok(()) => Ok(()),
        Err(other) => Err(other),
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

/// Throws the mapped Java exception for an error, or a `FlexiQException` for a panic, and
/// returns the type's default value to the JVM (which ignores it while the exception is pending).
pub struct ThrowMapped;

impl<T: Default> ErrorPolicy<T, BridgeError> for ThrowMapped {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut (),
        err: BridgeError,
    ) -> jni::errors::Result<T> {
        // A Java exception already pending (from a callback) is the more precise report.
        if !env.exception_check() {
            throw(env, java_class_of(&err), &err.to_string())?;
        }
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut (),
        payload: Box<dyn std::any::Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        if !env.exception_check() {
            let message = format!("native panic: {}", panic_message(payload.as_ref()));
            throw(env, FLEXIQ, &message)?;
        }
        Ok(T::default())
    }
}
