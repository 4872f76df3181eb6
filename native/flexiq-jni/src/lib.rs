//! The JNI bridge behind `io.flexiq.internal.NativeBridge`.
//!
//! Every native has one shape, `static native byte[] name(long handle, byte[] request)`, and
//! runs in the shell of `flexiq-jni-shell`: the request is read by the call's layout, the call
//! goes to `flexiq_core`, the response is written back. The natives are bound by
//! `RegisterNatives` when the library loads; no `Java_…` symbol is exported.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod client;
mod codes;
mod grants;
mod handles;
mod maintenance;
mod recipe;
mod runtime;
mod schedule;
mod worker;

use std::ffi::c_void;

use flexiq_jni_shell::errors::BridgeResult;
use flexiq_jni_shell::jni::sys::{jint, JavaVM};
use flexiq_jni_shell::native::Native;
use flexiq_jni_shell::natives;
use flexiq_jni_shell::wire::{Reader, Writer};

use flexiq_core::Client;

/// The Java class whose natives this library implements.
const BRIDGE_CLASS: &str = "io/flexiq/internal/NativeBridge";

/// Every native of `NativeBridge`, by its Java name; the layouts are documented at each call.
static NATIVES: &[Native] = natives! {
    "nativeDescribe" => free(codes::describe),
    "nativeCanonicalJson" => free(recipe::canonical_json),
    "nativeAutoKey" => free(recipe::auto_key),
    "nativeCronTicks" => free(schedule::cron_ticks),
    "nativeTickKey" => free(schedule::tick_key),
    "nativeConnect" => free(client::connect),
    "nativeClose" => client::close,
    "nativeMigrate" => on_client(client::migrate),
    "nativePendingMigrations" => on_client(client::pending_migrations),
    "nativeDropSchema" => on_client(client::drop_schema),
    "nativeEnqueue" => on_client(client::enqueue),
    "nativePrepareEnqueue" => on_client(client::prepare_enqueue),
    "nativeResolveEnqueue" => client::resolve_enqueue,
    "nativeDiscardEnqueue" => client::discard_enqueue,
    "nativeGetJob" => on_client(client::get_job),
    "nativeFindByKey" => on_client(client::find_by_key),
    "nativeListJobs" => on_client(client::list_jobs),
    "nativeThroughput" => on_client(client::throughput),
    "nativeGetPayload" => on_client(client::get_payload),
    "nativeCancel" => on_client(client::cancel),
    "nativePurge" => on_client(client::purge),
    "nativeMarkCompleted" => on_client(client::mark_completed),
    "nativeExpireKeys" => on_client(client::expire_keys),
    "nativeMaintain" => on_client(maintenance::maintain),
    "nativeRunMaintenance" => on_client(maintenance::run_maintenance),
    "nativeResignMaintenance" => on_client(maintenance::resign_maintenance),
    "nativeCountJobs" => on_client(client::count_jobs),
    "nativeSetRateLimit" => on_client(client::set_rate_limit),
    "nativeRemoveRateLimit" => on_client(client::remove_rate_limit),
    "nativePauseQueue" => on_client(client::pause_queue),
    "nativeResumeQueue" => on_client(client::resume_queue),
    "nativePausedQueues" => on_client(client::paused_queues),
    "nativeListWorkers" => on_client(client::list_workers),
    "nativeAttempts" => on_client(client::attempts),
    "nativeCountMatching" => on_client(client::count_matching),
    "nativeBulk" => on_client(client::bulk),
    "nativeDeclareSchedule" => on_client(client::declare_schedule),
    "nativeListSchedules" => on_client(client::list_schedules),
    "nativePauseSchedule" => on_client(client::pause_schedule),
    "nativeTriggerSchedule" => on_client(client::trigger_schedule),
    "nativeRedrive" => on_client(client::redrive),
    "nativeGrantProducer" => on_client(grants::grant_producer),
    "nativeGrantWorker" => on_client(grants::grant_worker),
    "nativeClaim" => on_client(worker::claim),
    "nativeRecoverClaim" => on_client(worker::recover_claim),
    "nativeComplete" => on_client(worker::complete),
    "nativeExtendLeases" => on_client(worker::extend_leases),
    "nativeFail" => on_client(worker::fail),
    "nativeRescueExpired" => on_client(worker::rescue_expired),
    "nativeReturnAttempts" => on_client(worker::return_attempts),
    "nativeAttemptsNow" => on_client(worker::attempts_now),
    "nativeSaveCheckpoint" => on_client(worker::save_checkpoint),
    "nativeCheckpoint" => on_client(worker::checkpoint),
    "nativeTransactionStatements" => on_client(worker::transaction_statements),
    "nativeWorkGeneration" => on_client(worker::work_generation),
    "nativeAwaitWork" => on_client(worker::await_work),
    "nativeWakeWorkers" => on_client(worker::wake_workers),
    "nativeHeartbeat" => on_client(worker::heartbeat),
    "nativeDeregister" => on_client(worker::deregister),
};

/// A call that needs no handle.
type FreeCall = fn(&mut Reader<'_>, &mut Writer) -> BridgeResult<()>;
/// A call on the client behind the handle.
type ClientCall = fn(&Client, &mut Reader<'_>, &mut Writer) -> BridgeResult<()>;

fn free(call: FreeCall) -> impl FnOnce(i64, &mut Reader<'_>, &mut Writer) -> BridgeResult<()> {
    move |_, r, w| call(r, w)
}

/// Looks the client up (a closed or unknown handle is an `IllegalStateException`) and runs
/// `call` on it.
fn on_client(
    call: ClientCall,
) -> impl FnOnce(i64, &mut Reader<'_>, &mut Writer) -> BridgeResult<()> {
    move |handle, r, w| call(&*client::CLIENTS.get(handle)?, r, w)
}

/// Binds [`NATIVES`] to `NativeBridge`; a class that does not declare them all, each with the
/// one signature, makes `System.load` throw an `UnsatisfiedLinkError` naming the method.
///
/// # Safety
///
/// Called by the JVM only, with its own pointer.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn JNI_OnLoad(vm: *mut JavaVM, _reserved: *mut c_void) -> jint {
    // Safety: the JVM calls JNI_OnLoad with its own pointer, on the loading thread.
    unsafe { flexiq_jni_shell::native::register_on_load(vm, BRIDGE_CLASS, NATIVES) }
}
