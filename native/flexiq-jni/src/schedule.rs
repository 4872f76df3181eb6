//! Cron schedules: the ticks of an expression in a time zone, and the dedup key of a tick.

use flexiq_core::cron::{self, CronSchedule};
use flexiq_jni_shell::errors::BridgeResult;
use flexiq_jni_shell::wire::{Reader, Writer};

/// `nativeCronTicks(0, text expression, text zone, i64 micros)` → opt i64 latest tick at or
/// before `micros`, i64 first tick after it.
pub(crate) fn cron_ticks(r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let expression = r.string("expression")?;
    let zone = r.string("zone")?;
    let micros = r.i64("micros")?;
    let schedule = CronSchedule::parse(&expression, &zone)?;
    w.opt_i64(schedule.latest_at_or_before(micros)?);
    w.i64(schedule.next_after(micros)?);
    Ok(())
}

/// `nativeTickKey(0, text name, i64 tickMicros)` → text key.
pub(crate) fn tick_key(r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let name = r.string("name")?;
    let tick = r.i64("tickMicros")?;
    w.string(&cron::tick_key(&name, tick)?)
}
