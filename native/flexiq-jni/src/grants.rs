//! Calls of `FlexiQ.grantProducer` and `FlexiQ.grantWorker`: privileges for roles other than
//! the schema's owner.

use flexiq_core::{Client, Grant};
use flexiq_jni_shell::errors::BridgeResult;
use flexiq_jni_shell::wire::{Reader, Writer};

use crate::runtime::block_on;

/// `nativeGrantProducer(client, text role)` → ∅.
pub(crate) fn grant_producer(
    client: &Client,
    r: &mut Reader<'_>,
    _: &mut Writer,
) -> BridgeResult<()> {
    grant(client, r, Grant::Producer)
}

/// `nativeGrantWorker(client, text role)` → ∅.
pub(crate) fn grant_worker(
    client: &Client,
    r: &mut Reader<'_>,
    _: &mut Writer,
) -> BridgeResult<()> {
    grant(client, r, Grant::Worker)
}

fn grant(client: &Client, r: &mut Reader<'_>, grant: Grant) -> BridgeResult<()> {
    let role = r.string("role")?;
    block_on(client.operations().grant(&role, grant))??;
    Ok(())
}
