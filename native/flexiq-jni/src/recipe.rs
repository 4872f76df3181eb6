//! The key recipe and canonical JSON, for callers that want them without enqueueing.

use flexiq_jni_shell::errors::BridgeResult;
use flexiq_jni_shell::wire::{Reader, Writer};

/// `nativeCanonicalJson(0, bytes json)` → the canonical JSON, the whole response.
pub(crate) fn canonical_json(r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let json = r.bytes("json")?;
    w.raw(&flexiq_core::canonical::canonicalize(json)?);
    Ok(())
}

/// `nativeAutoKey(0, text taskName, bytes payload)` → text key.
pub(crate) fn auto_key(r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let task_name = r.string("taskName")?;
    let payload = r.bytes("payload")?;
    w.string(&flexiq_core::recipe::auto_key(&task_name, payload)?)
}
