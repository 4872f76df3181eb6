//! Calls of `FlexiQ`'s maintenance: a pass if elected, a pass on demand, leaving the election.
//! Retention crosses as (i64 completedMillis, i64 cancelledMillis, i64 deadMillis, i64
//! batchSize); a report as (i64 keysReleased, rescued jobs as `nativeRescueExpired` answers
//! them, i64 completedDeleted, i64 cancelledDeleted, i64 deadDeleted, i64 workersRemoved, bool
//! moreToPrune).

use flexiq_core::{Client, Maintained, MaintenanceReport, Retention};
use flexiq_jni_shell::errors::BridgeResult;
use flexiq_jni_shell::wire::{Reader, Writer};

use crate::runtime::block_on;
use crate::worker::write_rescued;

fn retention(r: &mut Reader<'_>) -> BridgeResult<Retention> {
    Ok(Retention {
        completed_ms: r.i64("completedRetention")?,
        cancelled_ms: r.i64("cancelledRetention")?,
        dead_ms: r.i64("deadRetention")?,
        batch_size: r.i64("batchSize")?,
    })
}

fn write_report(report: &MaintenanceReport, w: &mut Writer) -> BridgeResult<()> {
    let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    w.i64(count(report.keys_released));
    write_rescued(&report.rescued, w)?;
    w.i64(count(report.completed_deleted));
    w.i64(count(report.cancelled_deleted));
    w.i64(count(report.dead_deleted));
    w.i64(count(report.workers_removed));
    w.bool(report.more_to_prune);
    Ok(())
}

/// `nativeMaintain(client, retention)` → i32 outcome (0: this client ran a pass, 1: another
/// client runs maintenance, 2: this client's role may not), then the report when it ran one.
pub(crate) fn maintain(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let retention = retention(r)?;
    match block_on(client.maintenance().maintain(&retention))?? {
        Maintained::Ran(report) => {
            w.i32(0);
            write_report(&report, w)?;
        }
        Maintained::ElsewhereRun => w.i32(1),
        Maintained::NotPermitted => w.i32(2),
    }
    Ok(())
}

/// `nativeRunMaintenance(client, retention)` → a report.
pub(crate) fn run_maintenance(
    client: &Client,
    r: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let retention = retention(r)?;
    write_report(
        &block_on(client.maintenance().run_maintenance(&retention))??,
        w,
    )
}

/// `nativeResignMaintenance(client, ∅)` → ∅.
pub(crate) fn resign_maintenance(
    client: &Client,
    _: &mut Reader<'_>,
    _: &mut Writer,
) -> BridgeResult<()> {
    block_on(client.maintenance().resign_maintenance())?;
    Ok(())
}
