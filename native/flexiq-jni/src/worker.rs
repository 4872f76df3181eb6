//! Entry points of `Worker`: claiming jobs, keeping their leases, recording attempts,
//! checkpoints, redrive and wake-ups. An attempt crosses as a job id and an attempt number.

use std::time::Duration;

use jni::objects::{JByteArray, JClass, JIntArray, JLongArray, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::{Env, EnvUnowned};

use flexiq_core::{Attempt, ClaimedJob, Redrive};

use crate::client::CLIENTS;
use crate::convert::{
    bytes_arg, int_array_arg, long_array_arg, string_arg, string_array_arg, text_arg,
};
use crate::errors::{BridgeError, BridgeResult, ThrowMapped};
use crate::runtime::block_on;

/// "No timeout" in the claimed jobs' timeout column.
const UNSET: i64 = i64::MIN;

fn millis(value: jlong, name: &str) -> BridgeResult<Duration> {
    u64::try_from(value)
        .map(Duration::from_millis)
        .map_err(|_| BridgeError::BadArgument(format!("{name} must not be negative, got {value}")))
}

fn attempts_arg(
    env: &Env<'_>,
    ids: &JLongArray<'_>,
    attempts: &JIntArray<'_>,
) -> BridgeResult<Vec<Attempt>> {
    if ids.is_null() {
        return Err(BridgeError::NullArgument("jobIds"));
    }
    let n = ids.len(env)?;
    let ids = long_array_arg(env, ids, n, "jobIds")?;
    let numbers = int_array_arg(env, attempts, n, "attempts")?;
    Ok(ids
        .into_iter()
        .zip(numbers)
        .map(|(job_id, attempt)| Attempt { job_id, attempt })
        .collect())
}

fn ids_out<'local>(
    env: &mut Env<'local>,
    attempts: &[Attempt],
) -> BridgeResult<JLongArray<'local>> {
    let ids: Vec<i64> = attempts.iter().map(|a| a.job_id).collect();
    let array = JLongArray::new(env, ids.len())?;
    array.set_region(env, 0, &ids)?;
    Ok(array)
}

/// One column of the claimed jobs.
fn column<T>(claimed: &[ClaimedJob], f: impl Fn(&ClaimedJob) -> T) -> Vec<T> {
    claimed.iter().map(f).collect()
}

fn names(
    env: &mut Env<'_>,
    array: &JObjectArray<'_, JString<'_>>,
    name: &'static str,
) -> BridgeResult<Vec<String>> {
    if array.is_null() {
        return Err(BridgeError::NullArgument(name));
    }
    let n = array.len(env)?;
    string_array_arg(env, array, n, name)?
        .into_iter()
        .map(|s| s.ok_or(BridgeError::NullArgument(name)))
        .collect()
}

/// The output buffers of a claim: Java allocates them once per worker and native code fills
/// the first entries (queue and task as indexes into the arrays passed in; timeout
/// `Long.MIN_VALUE` when none).
struct ClaimBuffers<'local> {
    ids: JLongArray<'local>,
    attempts: JIntArray<'local>,
    max_attempts: JIntArray<'local>,
    timeout_millis: JLongArray<'local>,
    queue_indexes: JIntArray<'local>,
    task_indexes: JIntArray<'local>,
    payloads: JObjectArray<'local, JByteArray<'local>>,
}

impl ClaimBuffers<'_> {
    /// How many jobs fit.
    fn capacity(&self, env: &Env<'_>) -> BridgeResult<usize> {
        if self.ids.is_null() || self.payloads.is_null() {
            return Err(BridgeError::NullArgument("claim buffer"));
        }
        Ok(self.ids.len(env)?)
    }

    /// Writes `claimed` (at most `capacity` jobs) and returns how many.
    fn fill(
        &self,
        env: &mut Env<'_>,
        claimed: &[ClaimedJob],
        queues: &[String],
        tasks: &[String],
    ) -> BridgeResult<jint> {
        let index_of = |names: &[String], name: &str| -> BridgeResult<i32> {
            names
                .iter()
                .position(|n| n == name)
                .map(|i| i as i32)
                .ok_or_else(|| BridgeError::BadArgument(format!("claimed unknown {name}")))
        };
        let queue_index = column(claimed, |j| index_of(queues, &j.queue))
            .into_iter()
            .collect::<BridgeResult<Vec<i32>>>()?;
        let task_index = column(claimed, |j| index_of(tasks, &j.task))
            .into_iter()
            .collect::<BridgeResult<Vec<i32>>>()?;
        self.ids.set_region(env, 0, &column(claimed, |j| j.id))?;
        self.timeout_millis
            .set_region(env, 0, &column(claimed, |j| j.timeout_ms.unwrap_or(UNSET)))?;
        self.attempts
            .set_region(env, 0, &column(claimed, |j| j.attempt))?;
        self.max_attempts
            .set_region(env, 0, &column(claimed, |j| j.max_attempts))?;
        self.queue_indexes.set_region(env, 0, &queue_index)?;
        self.task_indexes.set_region(env, 0, &task_index)?;
        for (i, job) in claimed.iter().enumerate() {
            let payload = env.byte_array_from_slice(&job.payload)?;
            self.payloads.set_element(env, i, &payload)?;
            env.delete_local_ref(payload);
        }
        Ok(claimed.len() as jint)
    }
}

/// `static native int nativeClaim(long client, String[] queues, String[] tasks, int limit,
/// long leaseMillis, long token, long[] ids, int[] attempts, int[] maxAttempts,
/// long[] timeoutMillis, int[] queueIndexes, int[] taskIndexes, byte[][] payloads)`
///
/// Claims up to `limit` (at most `ids.length`) jobs, marked with `token`, into the output
/// arrays; returns how many.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeClaim<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
    queues: JObjectArray<'local, JString<'local>>,
    tasks: JObjectArray<'local, JString<'local>>,
    limit: jint,
    lease_millis: jlong,
    token: jlong,
    ids: JLongArray<'local>,
    attempts: JIntArray<'local>,
    max_attempts: JIntArray<'local>,
    timeout_millis: JLongArray<'local>,
    queue_indexes: JIntArray<'local>,
    task_indexes: JIntArray<'local>,
    payloads: JObjectArray<'local, JByteArray<'local>>,
) -> jint {
    let out = ClaimBuffers {
        ids,
        attempts,
        max_attempts,
        timeout_millis,
        queue_indexes,
        task_indexes,
        payloads,
    };
    unowned
        .with_env(|env| -> BridgeResult<jint> {
            let client = CLIENTS.get(client)?;
            let queues = names(env, &queues, "queues")?;
            let tasks = names(env, &tasks, "tasks")?;
            let lease = millis(lease_millis, "lease")?;
            let limit = usize::try_from(limit).unwrap_or(0).min(out.capacity(env)?);
            let claimed = block_on(client.claim(&queues, &tasks, limit as i64, lease, token))??;
            out.fill(env, &claimed, &queues, &tasks)
        })
        .resolve::<ThrowMapped>()
}

/// `static native int nativeRecoverClaim(long client, String[] queues, String[] tasks,
/// long leaseMillis, long token, long[] ids, int[] attempts, int[] maxAttempts,
/// long[] timeoutMillis, int[] queueIndexes, int[] taskIndexes, byte[][] payloads)`
///
/// The jobs the claim marked `token` took and still runs, into the output arrays, as
/// `nativeClaim` writes them; returns how many.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeRecoverClaim<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
    queues: JObjectArray<'local, JString<'local>>,
    tasks: JObjectArray<'local, JString<'local>>,
    lease_millis: jlong,
    token: jlong,
    ids: JLongArray<'local>,
    attempts: JIntArray<'local>,
    max_attempts: JIntArray<'local>,
    timeout_millis: JLongArray<'local>,
    queue_indexes: JIntArray<'local>,
    task_indexes: JIntArray<'local>,
    payloads: JObjectArray<'local, JByteArray<'local>>,
) -> jint {
    let out = ClaimBuffers {
        ids,
        attempts,
        max_attempts,
        timeout_millis,
        queue_indexes,
        task_indexes,
        payloads,
    };
    unowned
        .with_env(|env| -> BridgeResult<jint> {
            let client = CLIENTS.get(client)?;
            let queues = names(env, &queues, "queues")?;
            let tasks = names(env, &tasks, "tasks")?;
            let lease = millis(lease_millis, "lease")?;
            let capacity = out.capacity(env)?;
            let recovered = block_on(client.recover_claim(token, lease))??;
            // A claim takes at most as many jobs as the buffers hold.
            let recovered = &recovered[..recovered.len().min(capacity)];
            out.fill(env, recovered, &queues, &tasks)
        })
        .resolve::<ThrowMapped>()
}

/// `static native long[] nativeComplete(long client, long[] ids, int[] attempts)`: completes
/// the attempts' jobs; returns the ids of those whose attempt still held the job.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeComplete<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
    ids: JLongArray<'local>,
    attempts: JIntArray<'local>,
) -> JLongArray<'local> {
    unowned
        .with_env(|env| -> BridgeResult<JLongArray<'local>> {
            let client = CLIENTS.get(client)?;
            let attempts = attempts_arg(env, &ids, &attempts)?;
            let done = block_on(client.complete(&attempts))??;
            ids_out(env, &done)
        })
        .resolve::<ThrowMapped>()
}

/// `static native long[] nativeExtendLeases(long client, long[] ids, int[] attempts,
/// long leaseMillis)`: returns the ids of the attempts that still hold their job.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeExtendLeases<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
    ids: JLongArray<'local>,
    attempts: JIntArray<'local>,
    lease_millis: jlong,
) -> JLongArray<'local> {
    unowned
        .with_env(|env| -> BridgeResult<JLongArray<'local>> {
            let client = CLIENTS.get(client)?;
            let attempts = attempts_arg(env, &ids, &attempts)?;
            let lease = millis(lease_millis, "lease")?;
            let kept = block_on(client.extend_leases(&attempts, lease))??;
            ids_out(env, &kept)
        })
        .resolve::<ThrowMapped>()
}

/// `static native long nativeFail(long client, long id, int attempt, String error)`: records
/// a failed attempt. Returns the retry's due time (microseconds since the epoch), 0 when the
/// job was dead-lettered, -1 when the attempt no longer held the job.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeFail<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
    id: jlong,
    attempt: jint,
    error: JString<'local>,
) -> jlong {
    unowned
        .with_env(|env| -> BridgeResult<jlong> {
            let client = CLIENTS.get(client)?;
            let error = text_arg(env, &error, "error")?;
            let attempt = Attempt {
                job_id: id,
                attempt,
            };
            Ok(match block_on(client.fail(attempt, &error))?? {
                None => -1,
                Some(failed) if failed.state == "dead" => 0,
                Some(failed) => failed.run_at,
            })
        })
        .resolve::<ThrowMapped>()
}

/// `static native long nativeRescueExpired(long client)`: returns how many jobs moved.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeRescueExpired<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
) -> jlong {
    unowned
        .with_env(|_env| -> BridgeResult<jlong> {
            let client = CLIENTS.get(client)?;
            let moved = block_on(client.rescue_expired())??;
            Ok(i64::try_from(moved).unwrap_or(i64::MAX))
        })
        .resolve::<ThrowMapped>()
}

/// `static native long nativeReturnAttempts(long client, long[] ids, int[] attempts)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeReturnAttempts<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
    ids: JLongArray<'local>,
    attempts: JIntArray<'local>,
) -> jlong {
    unowned
        .with_env(|env| -> BridgeResult<jlong> {
            let client = CLIENTS.get(client)?;
            let attempts = attempts_arg(env, &ids, &attempts)?;
            let returned = block_on(client.return_attempts(&attempts))??;
            Ok(i64::try_from(returned).unwrap_or(i64::MAX))
        })
        .resolve::<ThrowMapped>()
}

/// `static native boolean nativeSaveCheckpoint(long client, long id, int attempt, String name,
/// byte[] value)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeSaveCheckpoint<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
    id: jlong,
    attempt: jint,
    name: JString<'local>,
    value: JByteArray<'local>,
) -> jboolean {
    unowned
        .with_env(|env| -> BridgeResult<jboolean> {
            let client = CLIENTS.get(client)?;
            let name = string_arg(env, &name, "name")?;
            let value = bytes_arg(env, &value, "value")?;
            let attempt = Attempt {
                job_id: id,
                attempt,
            };
            Ok(block_on(client.save_checkpoint(attempt, &name, &value))??)
        })
        .resolve::<ThrowMapped>()
}

/// `static native byte[] nativeCheckpoint(long client, long id, String name)`: null when none.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeCheckpoint<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
    id: jlong,
    name: JString<'local>,
) -> JByteArray<'local> {
    unowned
        .with_env(|env| -> BridgeResult<JByteArray<'local>> {
            let client = CLIENTS.get(client)?;
            let name = string_arg(env, &name, "name")?;
            match block_on(client.checkpoint(id, &name))?? {
                Some(value) => Ok(env.byte_array_from_slice(&value)?),
                None => Ok(JByteArray::null()),
            }
        })
        .resolve::<ThrowMapped>()
}

/// `static native long[] nativeRedrive(long client, long id, String redriveKey)`: the outcome
/// (the ordinal of Java's `RedriveOutcome`) and, for a key held by another job, that job's id
/// (else 0).
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeRedrive<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
    id: jlong,
    redrive_key: JString<'local>,
) -> JLongArray<'local> {
    unowned
        .with_env(|env| -> BridgeResult<JLongArray<'local>> {
            let client = CLIENTS.get(client)?;
            let key = string_arg(env, &redrive_key, "redriveKey")?;
            let answer = match block_on(client.redrive(id, &key))?? {
                Redrive::Redriven => [0, 0],
                Redrive::Replayed => [1, 0],
                Redrive::KeyHeld { holder } => [2, holder],
                Redrive::NotDead { .. } => [3, 0],
                Redrive::NotFound => [4, 0],
            };
            let array = JLongArray::new(env, 2)?;
            array.set_region(env, 0, &answer)?;
            Ok(array)
        })
        .resolve::<ThrowMapped>()
}

/// `static native long nativeWorkGeneration(long client)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeWorkGeneration<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
) -> jlong {
    unowned
        .with_env(|_env| -> BridgeResult<jlong> {
            let client = CLIENTS.get(client)?;
            Ok(block_on(client.work_generation())? as jlong)
        })
        .resolve::<ThrowMapped>()
}

/// `static native long nativeAwaitWork(long client, long seen, long timeoutMillis)`: waits
/// until the wake-up generation moves past `seen`, or the timeout; returns the generation.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeAwaitWork<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
    seen: jlong,
    timeout_millis: jlong,
) -> jlong {
    unowned
        .with_env(|_env| -> BridgeResult<jlong> {
            let client = CLIENTS.get(client)?;
            let timeout = millis(timeout_millis, "timeout")?;
            Ok(block_on(client.await_work(seen as u64, timeout))? as jlong)
        })
        .resolve::<ThrowMapped>()
}

/// `static native void nativeWakeWorkers(long client)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeWakeWorkers<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
) {
    unowned
        .with_env(|_env| -> BridgeResult<()> {
            CLIENTS.get(client)?.wake_workers();
            Ok(())
        })
        .resolve::<ThrowMapped>()
}
