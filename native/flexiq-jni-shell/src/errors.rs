//! Error mapping: every Rust failure becomes exactly one Java exception class, here and only here.

use jni::errors::ErrorPolicy;
use jni::objects::{JObject, JThrowable, JValue};
use jni::strings::JNIString;
use jni::{jni_sig, jni_str, Env};

use flexiq_core::{Conflict, Error as Core};

/// What an entry point can fail with: the core's errors, or a failure of the bridge itself.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    #[error(transparent)]
    Core(#[from] Core),
    #[error("JNI call failed: {0}")]
    Jni(#[from] jni::errors::Error),
    #[error("{0} must not be null")]
    NullArgument(&'static str),
    #[error("{0}")]
    BadArgument(String),
    #[error("this {0} is closed")]
    Closed(&'static str),
    #[error("could not start FlexiQ's runtime: {0}")]
    Runtime(String),
    /// A request that does not follow its call's layout: the Java classes and the native
    /// library come from different builds.
    #[error("malformed native request: {0}; the FlexiQ jar and its native library must come from one build")]
    Malformed(String),
}

pub type BridgeResult<T> = Result<T, BridgeError>;

const ILLEGAL_ARGUMENT: &str = "java/lang/IllegalArgumentException";
const ILLEGAL_STATE: &str = "java/lang/IllegalStateException";
const FLEXIQ: &str = "io/flexiq/FlexiQException";
const PAYLOAD: &str = "io/flexiq/PayloadSerializationException";
const STORAGE: &str = "io/flexiq/StorageException";
const UNAVAILABLE: &str = "io/flexiq/StorageUnavailableException";
const POOL_EXHAUSTED: &str = "io/flexiq/PoolExhaustedException";

/// The Java class of every error but a conflict (which carries fields, see [`throw_conflict`]).
fn java_class_of(err: &BridgeError) -> &'static str {
    match err {
        BridgeError::Core(Core::InvalidArgument(_))
        | BridgeError::NullArgument(_)
        | BridgeError::BadArgument(_) => ILLEGAL_ARGUMENT,
        BridgeError::Core(Core::InvalidPayload(_)) => PAYLOAD,
        BridgeError::Core(Core::Unavailable(_) | Core::ServerFull(_)) => UNAVAILABLE,
        BridgeError::Core(Core::PoolExhausted(_)) => POOL_EXHAUSTED,
        BridgeError::Core(Core::Storage(_)) => STORAGE,
        BridgeError::Closed(_) => ILLEGAL_STATE,
        BridgeError::Core(Core::Conflict(_))
        | BridgeError::Jni(_)
        | BridgeError::Runtime(_)
        | BridgeError::Malformed(_) => FLEXIQ,
    }
}

fn throw(env: &mut Env<'_>, class: &str, message: &str) -> jni::errors::Result<()> {
    accept_pending(env.throw_new(JNIString::from(class), JNIString::from(message)))
}

/// Throwing reports the exception it just raised as an error; that is success here.
fn accept_pending(outcome: jni::errors::Result<()>) -> jni::errors::Result<()> {
    match outcome {
        Err(jni::errors::Error::JavaException) | Ok(()) => Ok(()),
        Err(other) => Err(other),
    }
}

/// `IdempotencyConflictException(String message, long jobId, int index, int batchIndex,
/// String keyPreview, String keyDigest, String fields)`; -1 stands for "none", fields are
/// comma-separated option names.
fn throw_conflict(env: &mut Env<'_>, message: &str, c: &Conflict) -> jni::errors::Result<()> {
    let message = JObject::from(env.new_string(message)?);
    let preview = JObject::from(env.new_string(&c.key_preview)?);
    let digest = JObject::from(env.new_string(&c.key_digest)?);
    let fields = JObject::from(env.new_string(c.fields.join(","))?);
    let index = i32::try_from(c.index).unwrap_or(i32::MAX);
    let batch_index = c
        .batch_index
        .map_or(-1, |i| i32::try_from(i).unwrap_or(i32::MAX));
    let exception = env.new_object(
        jni_str!("io/flexiq/IdempotencyConflictException"),
        jni_sig!("(Ljava/lang/String;JIILjava/lang/String;Ljava/lang/String;Ljava/lang/String;)V"),
        &[
            JValue::Object(&message),
            JValue::Long(c.job_id.unwrap_or(-1)),
            JValue::Int(index),
            JValue::Int(batch_index),
            JValue::Object(&preview),
            JValue::Object(&digest),
            JValue::Object(&fields),
        ],
    )?;
    let exception = env.cast_local::<JThrowable>(exception)?;
    accept_pending(env.throw(exception))
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
        // A Java exception already pending (from a JNI call) is the more precise report.
        if !env.exception_check() {
            match &err {
                BridgeError::Core(Core::Conflict(c)) => throw_conflict(env, &err.to_string(), c)?,
                other => throw(env, java_class_of(other), &other.to_string())?,
            }
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
