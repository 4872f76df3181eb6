//! Calls of `Worker`: claiming jobs, keeping their leases, recording attempts, checkpoints and
//! wake-ups. An attempt crosses as a job id and an attempt number.

use std::time::Duration;

use flexiq_core::{Attempt, ClaimedJob, Client, Registration, RescuedJob, MAX_CHECKPOINT_BYTES};
use flexiq_jni_shell::errors::{BridgeError, BridgeResult};
use flexiq_jni_shell::wire::{Reader, Writer};

use crate::codes;
use crate::runtime::block_on;

fn millis(r: &mut Reader<'_>, name: &'static str) -> BridgeResult<Duration> {
    let value = r.i64(name)?;
    u64::try_from(value)
        .map(Duration::from_millis)
        .map_err(|_| BridgeError::BadArgument(format!("{name} must not be negative, got {value}")))
}

/// A list of attempts: list of (i64 jobId, i32 attempt).
fn attempts(r: &mut Reader<'_>) -> BridgeResult<Vec<Attempt>> {
    let n = r.count("attempts")?;
    (0..n)
        .map(|_| {
            Ok(Attempt {
                job_id: r.i64("jobId")?,
                attempt: r.i32("attempt")?,
            })
        })
        .collect()
}

/// The attempts' job ids: list of i64.
fn write_ids(w: &mut Writer, attempts: &[Attempt]) -> BridgeResult<()> {
    w.count(attempts.len())?;
    for a in attempts {
        w.i64(a.job_id);
    }
    Ok(())
}

/// Claimed jobs: list of (i64 id, i32 attempt, i32 maxAttempts, optional i64 timeoutMillis,
/// i32 queue index, i32 task index, bytes payload, text-or-null payload codec, i64
/// waitedMicros, text-or-null trace context); queue and task are indexes into the lists the claim named, so that Java keeps
/// its own strings.
fn write_claimed(
    w: &mut Writer,
    claimed: &[ClaimedJob],
    queues: &[String],
    tasks: &[String],
) -> BridgeResult<()> {
    let index_of = |names: &[String], name: &str| -> BridgeResult<i32> {
        names
            .iter()
            .position(|n| n == name)
            .and_then(|i| i32::try_from(i).ok())
            .ok_or_else(|| BridgeError::BadArgument(format!("claimed unknown {name}")))
    };
    w.count(claimed.len())?;
    for job in claimed {
        w.i64(job.id);
        w.i32(job.attempt);
        w.i32(job.max_attempts);
        w.opt_i64(job.timeout_ms);
        w.i32(index_of(queues, &job.queue)?);
        w.i32(index_of(tasks, &job.task)?);
        w.bytes(&job.payload)?;
        w.opt_string(job.payload_codec.as_deref())?;
        w.i64(job.waited_us);
        w.opt_string(job.trace_context.as_deref())?;
    }
    Ok(())
}

/// `nativeClaim(client, list of text queues, list of text tasks, i32 limit, i64 leaseMillis,
/// i64 token)` → claimed jobs (see `write_claimed`), at most `limit`, marked with `token`; each
/// queue read on from where the last claims of the same queues and tasks got to.
pub(crate) fn claim(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let queues = r.strings("queue")?;
    let tasks = r.strings("task")?;
    let limit = r.i32("limit")?.max(0);
    let lease = millis(r, "lease")?;
    let token = r.i64("token")?;
    let claimed = block_on(client.worker_store().claim_next(
        &queues,
        &tasks,
        i64::from(limit),
        lease,
        token,
    ))??;
    write_claimed(w, &claimed, &queues, &tasks)
}

/// `nativeRecoverClaim(client, list of text queues, list of text tasks, i32 limit,
/// i64 leaseMillis, i64 token)` → the jobs the claim marked `token` took and still runs, their
/// leases renewed, at most `limit`, written as `nativeClaim` writes them.
pub(crate) fn recover_claim(
    client: &Client,
    r: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let queues = r.strings("queue")?;
    let tasks = r.strings("task")?;
    let limit = usize::try_from(r.i32("limit")?).unwrap_or(0);
    let lease = millis(r, "lease")?;
    let token = r.i64("token")?;
    let recovered = block_on(client.worker_store().recover_claim(token, lease))??;
    // A claim takes at most as many jobs as the worker's buffer holds.
    let recovered = &recovered[..recovered.len().min(limit)];
    write_claimed(w, recovered, &queues, &tasks)
}

/// `nativeComplete(client, attempts)` → the completions recorded: list of (i64 job id, bool
/// late), late when the attempt's lease had passed and a rescue had moved the job.
pub(crate) fn complete(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let attempts = attempts(r)?;
    let completed = block_on(client.worker_store().complete(&attempts))??;
    w.count(completed.len())?;
    for c in completed {
        w.i64(c.attempt.job_id);
        w.bool(c.late);
    }
    Ok(())
}

/// `nativeExtendLeases(client, attempts, i64 leaseMillis)` → the ids of the jobs whose attempt
/// still holds them.
pub(crate) fn extend_leases(
    client: &Client,
    r: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let attempts = attempts(r)?;
    let lease = millis(r, "lease")?;
    write_ids(
        w,
        &block_on(client.worker_store().extend_leases(&attempts, lease))??,
    )
}

/// `nativeFail(client, i64 jobId, i32 attempt, text error)` → bool recorded: whether the
/// attempt still held its job, or lost it to a rescue with no later attempt started; if so, i32
/// the job's new state code (retryable or dead), i64 its due time in microseconds since the
/// epoch and bool late (recorded after a rescue).
pub(crate) fn fail(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let attempt = Attempt {
        job_id: r.i64("jobId")?,
        attempt: r.i32("attempt")?,
    };
    let error = r.text("error")?;
    match block_on(client.worker_store().fail(attempt, &error))?? {
        None => w.bool(false),
        Some(failed) => {
            w.bool(true);
            w.i32(codes::job_state(&failed.state)?);
            w.i64(failed.run_at);
            w.bool(failed.late);
        }
    }
    Ok(())
}

/// `nativeRescueExpired(client, ∅)` → the jobs put back to work or dead-lettered: list of
/// (i64 id, text queue, text task, i32 attempt, i32 maxAttempts, bool dead, bool late, text
/// error).
pub(crate) fn rescue_expired(
    client: &Client,
    _: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let moved = block_on(client.worker_store().rescue_expired())??;
    write_rescued(&moved, w)
}

/// Rescued jobs, as `nativeRescueExpired` answers them.
pub(crate) fn write_rescued(moved: &[RescuedJob], w: &mut Writer) -> BridgeResult<()> {
    w.count(moved.len())?;
    for job in moved {
        w.i64(job.id);
        w.string(&job.queue)?;
        w.string(&job.task)?;
        w.i32(job.attempt);
        w.i32(job.max_attempts);
        w.bool(job.dead);
        w.bool(job.late);
        w.string(&job.error)?;
    }
    Ok(())
}

/// `nativeReturnAttempts(client, attempts)` → the ids of the jobs whose attempt was given back.
pub(crate) fn return_attempts(
    client: &Client,
    r: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let attempts = attempts(r)?;
    write_ids(
        w,
        &block_on(client.worker_store().return_attempts(&attempts))??,
    )
}

/// `nativeAttemptsNow(client, list of i64 job ids)` → where those jobs stand now: list of (i64
/// id, i32 attempt, i32 state code).
pub(crate) fn attempts_now(
    client: &Client,
    r: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let n = r.count("jobIds")?;
    let ids = (0..n)
        .map(|_| r.i64("jobId"))
        .collect::<BridgeResult<Vec<i64>>>()?;
    let now = block_on(client.worker_store().attempts_now(&ids))??;
    w.count(now.len())?;
    for job in now {
        w.i64(job.id);
        w.i32(job.attempt);
        w.i32(codes::job_state(&job.state)?);
    }
    Ok(())
}

/// `nativeSaveCheckpoint(client, i64 jobId, i32 attempt, text name, bytes value)` → bool:
/// whether the attempt still held its job.
pub(crate) fn save_checkpoint(
    client: &Client,
    r: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let attempt = Attempt {
        job_id: r.i64("jobId")?,
        attempt: r.i32("attempt")?,
    };
    let name = r.string("name")?;
    let value = r.bytes("value")?;
    w.bool(block_on(
        client.worker_store().save_checkpoint(attempt, &name, value),
    )??);
    Ok(())
}

/// `nativeTransactionStatements(client, ∅)` → text complete, text saveCheckpoint, i32 the most
/// bytes a checkpoint holds: the statements a handler runs on the application's connection, in
/// its transaction (JDBC placeholders).
pub(crate) fn transaction_statements(
    client: &Client,
    _: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let statements = client.worker_store().in_transaction();
    w.string(&statements.complete)?;
    w.string(&statements.save_checkpoint)?;
    w.i32(MAX_CHECKPOINT_BYTES as i32);
    Ok(())
}

/// `nativeCheckpoint(client, i64 jobId, text name)` → bool found, then if found bytes value.
pub(crate) fn checkpoint(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let id = r.i64("jobId")?;
    let name = r.string("name")?;
    match block_on(client.worker_store().checkpoint(id, &name))?? {
        None => w.bool(false),
        Some(value) => {
            w.bool(true);
            w.bytes(&value)?;
        }
    }
    Ok(())
}

/// `nativeWorkGeneration(client, ∅)` → i64 the wake-up generation; starts the listener.
pub(crate) fn work_generation(
    client: &Client,
    _: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    w.i64(block_on(client.wakeups().work_generation())? as i64);
    Ok(())
}

/// `nativeAwaitWork(client, i64 seen, i64 timeoutMillis)` → i64 the generation once it moved
/// past `seen`, or at the timeout.
pub(crate) fn await_work(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let seen = r.i64("seen")? as u64;
    let timeout = millis(r, "timeout")?;
    w.i64(block_on(client.wakeups().await_work(seen, timeout))? as i64);
    Ok(())
}

/// `nativeWakeWorkers(client, ∅)` → ∅.
/// `nativeHeartbeat(client, text id, text name, list of text queues, list of text tasks, i32
/// concurrency, i64 leaseMillis, i64 startedAtMicros)` → ∅: registers the worker or renews its
/// registration (the core names the host and process).
pub(crate) fn heartbeat(client: &Client, r: &mut Reader<'_>, _: &mut Writer) -> BridgeResult<()> {
    let registration = Registration {
        id: r.string("id")?,
        name: r.string("name")?,
        queues: r.strings("queues")?,
        tasks: r.strings("tasks")?,
        concurrency: r.i32("concurrency")?,
        lease: millis(r, "lease")?,
        started_at_us: r.i64("startedAt")?,
    };
    block_on(client.worker_store().heartbeat(&registration))??;
    Ok(())
}

/// `nativeDeregister(client, text id)` → ∅.
pub(crate) fn deregister(client: &Client, r: &mut Reader<'_>, _: &mut Writer) -> BridgeResult<()> {
    let id = r.string("id")?;
    block_on(client.worker_store().deregister(&id))??;
    Ok(())
}

pub(crate) fn wake_workers(
    client: &Client,
    _: &mut Reader<'_>,
    _: &mut Writer,
) -> BridgeResult<()> {
    client.wakeups().wake_workers();
    Ok(())
}
