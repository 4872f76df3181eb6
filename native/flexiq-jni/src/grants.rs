//! Entry point of `FlexiQ.grantProducer` and `FlexiQ.grantWorker`: privileges for roles other
//! than the schema's owner.

use jni::objects::{JClass, JString};
use jni::sys::{jint, jlong};
use jni::EnvUnowned;

use flexiq_core::Grant;

use crate::client::CLIENTS;
use crate::convert::string_arg;
use crate::errors::{BridgeError, BridgeResult, ThrowMapped};
use crate::runtime::block_on;

/// `static native void nativeGrant(long client, String role, int grant)`: grants `role` one
/// of the privilege sets Java names by the `GRANT_*` constants of `NativeBridge`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeGrant<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
    role: JString<'local>,
    grant: jint,
) {
    unowned
        .with_env(|env| -> BridgeResult<()> {
            let client = CLIENTS.get(client)?;
            let role = string_arg(env, &role, "role")?;
            let grant = match grant {
                0 => Grant::Producer,
                1 => Grant::Worker,
                other => return Err(BridgeError::BadArgument(format!("no grant {other}"))),
            };
            block_on(client.grant(&role, grant))??;
            Ok(())
        })
        .resolve::<ThrowMapped>()
}
