//! Entry points of `FlexiQ`, the client: connect, enqueue, read and change jobs, close.

use std::sync::LazyLock;
use std::time::Duration;

use jni::objects::{
    JByteArray, JClass, JDoubleArray, JIntArray, JLongArray, JObjectArray, JString,
};
use jni::sys::{jboolean, jint, jlong, jstring};
use jni::EnvUnowned;

use flexiq_core::{Client, ClientConfig, JobRequest, Outcome, RetryPolicy, Schedule};

use crate::convert::{
    bytes_array_arg, double_array_arg, int_array_arg, long_array_arg, string_arg, string_array_arg,
};
use crate::errors::{BridgeError, BridgeResult, ThrowMapped};
use crate::handles::Handles;
use crate::runtime::block_on;

pub(crate) static CLIENTS: LazyLock<Handles<Client>> =
    LazyLock::new(|| Handles::new("FlexiQ client"));

/// Sentinel for "not set" in the long columns of a batch (runAt, delay, timeout, retention).
const UNSET: i64 = i64::MIN;

/// `static native long nativeConnect(String url, String schema, int poolSize,
/// long connectTimeoutMillis, long acquireTimeoutMillis, boolean migrate)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeConnect<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    url: JString<'local>,
    schema: JString<'local>,
    pool_size: jint,
    connect_timeout_millis: jlong,
    acquire_timeout_millis: jlong,
    migrate: jboolean,
) -> jlong {
    unowned
        .with_env(|env| -> BridgeResult<jlong> {
            let config = ClientConfig {
                url: string_arg(env, &url, "url")?,
                schema: string_arg(env, &schema, "schema")?,
                pool_size: u32::try_from(pool_size).map_err(|_| {
                    BridgeError::BadArgument(format!("poolSize must be positive, got {pool_size}"))
                })?,
                connect_timeout: Duration::from_millis(
                    u64::try_from(connect_timeout_millis).unwrap_or(0),
                ),
                acquire_timeout: Duration::from_millis(
                    u64::try_from(acquire_timeout_millis).unwrap_or(0),
                ),
                migrate,
            };
            let client = block_on(Client::connect(&config))??;
            Ok(CLIENTS.insert(client))
        })
        .resolve::<ThrowMapped>()
}

/// `static native void nativeClose(long client)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeClose<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
) {
    unowned
        .with_env(|_env| -> BridgeResult<()> {
            // Connections close when the last call still using the client returns.
            CLIENTS.remove(client);
            Ok(())
        })
        .resolve::<ThrowMapped>()
}

/// `static native int nativeMigrate(long client)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeMigrate<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
) -> jint {
    unowned
        .with_env(|_env| -> BridgeResult<jint> {
            let client = CLIENTS.get(client)?;
            let applied = block_on(client.migrate())??;
            Ok(jint::try_from(applied).unwrap_or(jint::MAX))
        })
        .resolve::<ThrowMapped>()
}

/// `static native long[] nativeEnqueue(long client, String[] tasks, byte[][] payloads,
/// String[] resolvedKeys, String[] scopes, String[] queues, int[] priorities,
/// long[] runAtMicros, long[] delayMillis, int[] maxAttempts, long[] retryInitialMillis,
/// long[] retryMaxMillis, double[] retryMultipliers, double[] retryJitters,
/// long[] timeoutMillis, String[] nulSeparatedTags, long[] keyRetentionMillis)`
///
/// One entry per job, column by column; a single enqueue is a batch of one. Returns the job
/// ids followed by the outcomes (0 accepted, 1 replayed). The only key input is the resolved
/// key: how it was resolved stays in Java.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeEnqueue<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
    tasks: JObjectArray<'local, JString<'local>>,
    payloads: JObjectArray<'local, JByteArray<'local>>,
    resolved_keys: JObjectArray<'local, JString<'local>>,
    scopes: JObjectArray<'local, JString<'local>>,
    queues: JObjectArray<'local, JString<'local>>,
    priorities: JIntArray<'local>,
    run_at_micros: JLongArray<'local>,
    delay_millis: JLongArray<'local>,
    max_attempts: JIntArray<'local>,
    retry_initial_millis: JLongArray<'local>,
    retry_max_millis: JLongArray<'local>,
    retry_multipliers: JDoubleArray<'local>,
    retry_jitters: JDoubleArray<'local>,
    timeout_millis: JLongArray<'local>,
    nul_separated_tags: JObjectArray<'local, JString<'local>>,
    key_retention_millis: JLongArray<'local>,
) -> JLongArray<'local> {
    unowned
        .with_env(|env| -> BridgeResult<JLongArray<'local>> {
            let client = CLIENTS.get(client)?;
            let payloads = bytes_array_arg(env, &payloads, "payloads")?;
            let n = payloads.len();
            let tasks = string_array_arg(env, &tasks, n, "tasks")?;
            let keys = string_array_arg(env, &resolved_keys, n, "resolvedKeys")?;
            let scopes = string_array_arg(env, &scopes, n, "scopes")?;
            let queues = string_array_arg(env, &queues, n, "queues")?;
            let tags = string_array_arg(env, &nul_separated_tags, n, "tags")?;
            let priorities = int_array_arg(env, &priorities, n, "priorities")?;
            let run_at = long_array_arg(env, &run_at_micros, n, "runAtMicros")?;
            let delay = long_array_arg(env, &delay_millis, n, "delayMillis")?;
            let max_attempts = int_array_arg(env, &max_attempts, n, "maxAttempts")?;
            let initial = long_array_arg(env, &retry_initial_millis, n, "retryInitialMillis")?;
            let max = long_array_arg(env, &retry_max_millis, n, "retryMaxMillis")?;
            let multiplier = double_array_arg(env, &retry_multipliers, n, "retryMultipliers")?;
            let jitter = double_array_arg(env, &retry_jitters, n, "retryJitters")?;
            let timeout = long_array_arg(env, &timeout_millis, n, "timeoutMillis")?;
            let retention = long_array_arg(env, &key_retention_millis, n, "keyRetentionMillis")?;

            let mut requests = Vec::with_capacity(n);
            for (i, payload) in payloads.into_iter().enumerate() {
                let required = |v: &Option<String>, name: &'static str| {
                    v.clone().ok_or(BridgeError::NullArgument(name))
                };
                requests.push(JobRequest {
                    task: required(&tasks[i], "task")?,
                    payload,
                    key: keys[i].clone(),
                    scope: required(&scopes[i], "scope")?,
                    queue: required(&queues[i], "queue")?,
                    priority: priorities[i],
                    schedule: schedule(run_at[i], delay[i]),
                    max_attempts: max_attempts[i],
                    retry: RetryPolicy {
                        initial_ms: initial[i],
                        max_ms: max[i],
                        multiplier: multiplier[i],
                        jitter: jitter[i],
                    },
                    timeout_ms: set(timeout[i]),
                    tags: tags[i]
                        .as_deref()
                        .filter(|t| !t.is_empty())
                        .map(|t| t.split('\0').map(str::to_owned).collect())
                        .unwrap_or_default(),
                    key_retention_ms: set(retention[i]),
                });
            }
            let results = block_on(client.enqueue_many(&requests))??;
            let mut out: Vec<i64> = results.iter().map(|r| r.job_id).collect();
            out.extend(results.iter().map(|r| match r.outcome {
                Outcome::Accepted => 0,
                Outcome::Replayed => 1,
            }));
            let array = JLongArray::new(env, out.len())?;
            array.set_region(env, 0, &out)?;
            Ok(array)
        })
        .resolve::<ThrowMapped>()
}

fn set(value: i64) -> Option<i64> {
    (value != UNSET).then_some(value)
}

fn schedule(run_at_micros: i64, delay_millis: i64) -> Schedule {
    match (set(run_at_micros), set(delay_millis)) {
        (Some(micros), _) => Schedule::At { micros },
        (None, Some(millis)) => Schedule::Delay { millis },
        (None, None) => Schedule::Immediate,
    }
}

/// `static native String nativeGetJob(long client, long jobId)`: the job as JSON, or null.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeGetJob<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
    job_id: jlong,
) -> jstring {
    unowned
        .with_env(|env| -> BridgeResult<jstring> {
            let client = CLIENTS.get(client)?;
            match block_on(client.get_job(job_id))?? {
                None => Ok(std::ptr::null_mut()),
                Some(job) => {
                    let json = serde_json::to_string(&job)
                        .map_err(|e| BridgeError::BadArgument(e.to_string()))?;
                    Ok(env.new_string(json)?.into_raw())
                }
            }
        })
        .resolve::<ThrowMapped>()
}

/// `static native boolean nativeJobAction(long client, long jobId, int action)`: one of the
/// state changes Java asks for by job id (the `JOB_*` constants of `NativeBridge`). Returns
/// whether the job was in a state the change applies to.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeJobAction<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
    job_id: jlong,
    action: jint,
) -> jboolean {
    unowned
        .with_env(|_env| -> BridgeResult<jboolean> {
            let client = CLIENTS.get(client)?;
            let done = match action {
                0 => block_on(client.cancel(job_id))??,
                1 => block_on(client.purge(job_id))??,
                2 => block_on(client.mark_completed(job_id))??,
                other => return Err(BridgeError::BadArgument(format!("no job action {other}"))),
            };
            Ok(done)
        })
        .resolve::<ThrowMapped>()
}

/// `static native long nativeExpireKeys(long client)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_flexiq_internal_NativeBridge_nativeExpireKeys<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    client: jlong,
) -> jlong {
    unowned
        .with_env(|_env| -> BridgeResult<jlong> {
            let client = CLIENTS.get(client)?;
            let removed = block_on(client.expire_keys())??;
            Ok(i64::try_from(removed).unwrap_or(i64::MAX))
        })
        .resolve::<ThrowMapped>()
}
