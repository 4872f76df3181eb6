//! Calls from native threads up into the bridge class, for what only Java can answer (a
//! password supplier). The class is kept from `JNI_OnLoad`: a thread that native code attached
//! finds classes through the system class loader, which does not see the application's classes
//! under a container or Spring Boot's launcher.

use std::sync::OnceLock;

use jni::objects::{JClass, JString, JValue};
use jni::refs::Global;
use jni::strings::JNIString;
use jni::{jni_sig, Env, JavaVM};

static BRIDGE: OnceLock<Global<JClass<'static>>> = OnceLock::new();

/// Keeps the bridge class for later upcalls; called while the library loads.
pub(crate) fn keep_bridge(env: &mut Env<'_>, class: &str) -> jni::errors::Result<()> {
    let found = env.find_class(JNIString::from(class))?;
    let global = env.new_global_ref(&found)?;
    let _ = BRIDGE.set(global);
    Ok(())
}

/// Calls the bridge's `static String method(long)` on this thread (attached to the JVM for
/// good if it was not), returning the string, or what the Java side threw, as a sentence.
pub fn string_of(method: &str, argument: i64) -> Result<Option<String>, String> {
    let bridge = BRIDGE
        .get()
        .ok_or_else(|| "FlexiQ's native library was not loaded by its bridge class".to_owned())?;
    let vm = JavaVM::singleton().map_err(|e| format!("no Java VM to ask: {e}"))?;
    vm.attach_current_thread(|env| -> jni::errors::Result<Option<String>> {
        let value = env.call_static_method(
            bridge,
            JNIString::from(method),
            jni_sig!("(J)Ljava/lang/String;"),
            &[JValue::Long(argument)],
        )?;
        let object = value.l()?;
        if object.is_null() {
            return Ok(None);
        }
        let text = env.cast_local::<JString>(object)?;
        Ok(Some(text.try_to_string(env)?))
    })
    .map_err(|e| match e {
        jni::errors::Error::CaughtJavaException { name, msg, .. } => format!("{name}: {msg}"),
        other => other.to_string(),
    })
}
