//! The key recipe and canonical JSON, for callers that want them without enqueueing.

use flexiq_jni_shell::errors::BridgeResult;
use flexiq_jni_shell::wire::{Reader, Writer};

use flexiq_core::Error as Core;

/// `nativeCanonicalJson(0, list of bytes json)` → list of bytes, the canonical form of each, in
/// order. A list, so that an enqueue whose payloads a codec encodes (which needs their canonical
/// bytes in Java) crosses for all of them at once.
pub(crate) fn canonical_json(r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let n = r.count("json")?;
    w.count(n)?;
    for entry in 0..n {
        let canonical =
            flexiq_core::canonical::canonicalize(r.bytes("json")?).map_err(|e| match e {
                Core::InvalidPayload(why) if n > 1 => {
                    Core::InvalidPayload(format!("{why} (batch entry {entry})"))
                }
                other => other,
            })?;
        w.bytes(&canonical)?;
    }
    Ok(())
}

/// `nativeAutoKey(0, text taskName, bytes payload)` → text key.
pub(crate) fn auto_key(r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let task_name = r.string("taskName")?;
    let payload = r.bytes("payload")?;
    w.string(&flexiq_core::recipe::auto_key(&task_name, payload)?)
}
