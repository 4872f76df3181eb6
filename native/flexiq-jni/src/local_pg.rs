//! Entry points of `LocalPostgres`: a private PostgreSQL for the demo, tests and benchmarks.

use std::sync::{LazyLock, Mutex};

use jni::objects::{JClass, JString};
use jni::sys::{jboolean, jlong, jstring};
use jni::EnvUnowned;

use flexiq_local_pg::{LocalPostgres, Options, ServerTls};

use crate::convert::optional_string_arg;
use crate::errors::{BridgeError, BridgeResult, ThrowMapped};
use crate::handles::Handles;

/// A server is stopped by taking it out of its mutex, which needs ownership.
static SERVERS: LazyLock<Handles<Mutex<Option<LocalPostgres>>>> =
    LazyLock::new(|| Handles::new("local PostgreSQL"));

/// `static native long nativeStartLocalPostgres(boolean durable, String tlsCertificate,
/// String tlsKey)`: TLS on when both files are given, off when both are null.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeStartLocalPostgres<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    durable: jboolean,
    tls_certificate: JString<'local>,
    tls_key: JString<'local>,
) -> jlong {
    unowned
        .with_env(|env| -> BridgeResult<jlong> {
            let tls = match (
                optional_string_arg(env, &tls_certificate, "tlsCertificate")?,
                optional_string_arg(env, &tls_key, "tlsKey")?,
            ) {
                (Some(certificate), Some(key)) => Some(ServerTls {
                    certificate: certificate.into(),
                    key: key.into(),
                    client_ca: None,
                }),
                (None, None) => None,
                _ => {
                    return Err(BridgeError::BadArgument(
                        "a TLS certificate and its key go together".into(),
                    ))
                }
            };
            let server = LocalPostgres::start(&Options {
                durable,
                tls,
                ..Options::default()
            })?;
            Ok(SERVERS.insert(Mutex::new(Some(server))))
        })
        .resolve::<ThrowMapped>()
}

/// `static native String nativeLocalPostgresUrl(long server)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeLocalPostgresUrl<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    server: jlong,
) -> jstring {
    unowned
        .with_env(|env| -> BridgeResult<jstring> {
            let server = SERVERS.get(server)?;
            let guard = server.lock().unwrap_or_else(|p| p.into_inner());
            let url = guard.as_ref().map(LocalPostgres::url).unwrap_or_default();
            Ok(env.new_string(url)?.into_raw())
        })
        .resolve::<ThrowMapped>()
}

/// `static native void nativeStopLocalPostgres(long server)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeStopLocalPostgres<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    server: jlong,
) {
    unowned
        .with_env(|_env| -> BridgeResult<()> {
            if let Some(server) = SERVERS.remove(server) {
                let taken = server.lock().unwrap_or_else(|p| p.into_inner()).take();
                if let Some(server) = taken {
                    server.stop()?;
                }
            }
            Ok(())
        })
        .resolve::<ThrowMapped>()
}

/// `static native void nativeSetLocalPostgresRunning(long server, boolean running)`: shuts the
/// server down keeping its files, or starts it again on the same port.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeSetLocalPostgresRunning<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    server: jlong,
    running: jboolean,
) {
    unowned
        .with_env(|_env| -> BridgeResult<()> {
            let server = SERVERS.get(server)?;
            let mut guard = server.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(server) = guard.as_mut() {
                if running {
                    server.restart()?;
                } else {
                    server.shut_down()?;
                }
            }
            Ok(())
        })
        .resolve::<ThrowMapped>()
}
