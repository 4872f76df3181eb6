//! Calls of `FlexiQ`, the client: connect, enqueue, read and change jobs, close.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use flexiq_core::request::fields::{self, Draft, Wire};
use flexiq_core::server::PasswordSource;
use flexiq_core::{
    BulkAction, Client, ClientConfig, EnqueueRow, Enqueued, JobFilter, JobInfo, JobQuery,
    JobRequest, Param, PendingEnqueue, PreparedEnqueue, RateTarget, ScheduleDeclaration,
};
use flexiq_jni_shell::errors::{BridgeError, BridgeResult};
use flexiq_jni_shell::upcall;
use flexiq_jni_shell::wire::{Reader, Writer};

use crate::codes;
use crate::handles::Handles;
use crate::runtime::block_on;

pub(crate) static CLIENTS: LazyLock<Handles<Client>> =
    LazyLock::new(|| Handles::new("FlexiQ client"));

/// Enqueues prepared for the application's connection, from prepare until resolved or
/// discarded, each with whether its results describe their keys.
static PENDING: LazyLock<Handles<(PendingEnqueue, bool)>> =
    LazyLock::new(|| Handles::new("prepared enqueue"));

/// A password supplier of the Java client, by the number `NativeBridge` registered it under.
struct JavaPassword(i64);

impl PasswordSource for JavaPassword {
    fn password(&self) -> Result<String, String> {
        match upcall::string_of("password", self.0)? {
            Some(password) => Ok(password),
            None => Err("the password supplier returned null".into()),
        }
    }
}

/// `nativeConnect(0, text url, text-or-null directUrl, i64 passwordSupplier (0: none),
/// text schema, i32 poolSize, i64 connectTimeoutMillis, i64 acquireTimeoutMillis,
/// bool migrate)` → i64 handle.
pub(crate) fn connect(r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let url = r.string("url")?;
    let direct_url = r.opt_string("directUrl")?;
    let password = match r.i64("passwordSupplier")? {
        0 => None,
        id => Some(Arc::new(JavaPassword(id)) as Arc<dyn PasswordSource>),
    };
    let schema = r.string("schema")?;
    let pool_size = r.i32("poolSize")?;
    let config = ClientConfig {
        url,
        direct_url,
        password,
        schema,
        pool_size: u32::try_from(pool_size).map_err(|_| {
            BridgeError::BadArgument(format!("poolSize must be positive, got {pool_size}"))
        })?,
        connect_timeout: Duration::from_millis(
            u64::try_from(r.i64("connectTimeout")?).unwrap_or(0),
        ),
        acquire_timeout: Duration::from_millis(
            u64::try_from(r.i64("acquireTimeout")?).unwrap_or(0),
        ),
        migrate: r.bool("migrate")?,
    };
    let client = block_on(Client::connect(&config))??;
    w.i64(CLIENTS.insert(client));
    Ok(())
}

/// `nativeClose(client, ∅)` → ∅. Connections close when the last call still using the client
/// returns.
pub(crate) fn close(handle: i64, _: &mut Reader<'_>, _: &mut Writer) -> BridgeResult<()> {
    CLIENTS.remove(handle);
    Ok(())
}

/// `nativePendingMigrations(client, ∅)` → i32 migrations and definitions not applied.
pub(crate) fn pending_migrations(
    client: &Client,
    _: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let pending = block_on(client.pending_migrations())??;
    w.i32(i32::try_from(pending).unwrap_or(i32::MAX));
    Ok(())
}

/// `nativeMigrate(client, ∅)` → i32 migrations applied.
pub(crate) fn migrate(client: &Client, _: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let applied = block_on(client.migrate())??;
    w.i32(i32::try_from(applied).unwrap_or(i32::MAX));
    Ok(())
}

/// `nativeDropSchema(client, ∅)` → ∅.
pub(crate) fn drop_schema(client: &Client, _: &mut Reader<'_>, _: &mut Writer) -> BridgeResult<()> {
    block_on(client.drop_schema())??;
    Ok(())
}

/// `nativeEnqueue(client, bool describeKeys, list of entry)` → list of (i64 jobId, i32 outcome
/// code, i32 reason code, 0 for none, then, with `describeKeys`, text-or-null keyPreview and
/// text-or-null keyDigest in hex), in input order, one statement for the whole list. An entry
/// is the request's fields in the order and wire kinds of `flexiq_core::request::fields` (which
/// `nativeDescribe` lists for the Java writer to check): task, canonicalize, payload, codec,
/// encoded, codecDigest, deriveKey, key, scope, queue, priority, runAt, delay, maxAttempts,
/// retryInitialDelay, retryMaxDelay, retryMultiplier, retryJitter, timeout, tags, keyRetention,
/// deadline, concurrencyKey, concurrencyLimit, debounce, maxWait, throttle.
///
/// `canonicalize` says the payload is JSON to put in canonical form first; `deriveKey` says the
/// key is the auto key of the (canonical) payload. Java resolves which key applies; only that
/// key, or the request to derive it, crosses. A derived-key enqueue thus crosses once. `codec`
/// names the payload codec that made `encoded` of the payload, stored in its place, and
/// `codecDigest` is the codec's digest of the payload (see `flexiq_core::Encoded`); such a
/// payload is serialized already, so `canonicalize` is false. The key views are the core's
/// preview and digest of each entry's key, for listeners: Java never works them out itself.
pub(crate) fn enqueue(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let describe_keys = r.bool("describeKeys")?;
    let requests = job_requests(r)?;
    let results = block_on(client.producer().enqueue_many(&requests))??;
    write_enqueued(w, &results, describe_keys.then_some(&requests[..]))
}

/// `nativePrepareEnqueue(client, bool describeKeys, list of entry)` → the statement that
/// enqueues the entries (as `nativeEnqueue` takes them), for the caller to run on a connection of its own: text sql (with
/// `?` placeholders), then a list of parameters, each: text name, text element type (`bytea`,
/// `text`, `int4`, `int8`, `float8` or `bool`) and a list of elements, each bytes-or-null
/// (bytea), text-or-null (text) or a bool present followed, if present, by an i32, i64, f64 or
/// bool; then the i64 handle of the pending enqueue, which `nativeResolveEnqueue` or
/// `nativeDiscardEnqueue` takes. Touches no database. The list must not be empty.
pub(crate) fn prepare_enqueue(
    client: &Client,
    r: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let describe_keys = r.bool("describeKeys")?;
    let requests = job_requests(r)?;
    let prepared = PreparedEnqueue::new(&requests)?;
    let (sql, params) = client
        .producer()
        .in_transaction(&prepared)
        .ok_or_else(|| BridgeError::BadArgument("nothing to enqueue".into()))?;
    w.string(sql)?;
    w.count(params.len())?;
    for (p, name) in params.iter().zip(prepared.param_names()) {
        w.string(name)?;
        w.string(p.element_type())?;
        match p {
            Param::Bytea(v) => elements(w, v, |w, e| w.opt_bytes(*e))?,
            Param::Text(v) => elements(w, v, |w, e| w.opt_string(*e))?,
            Param::Int4(v) => elements(w, v, |w, e| present(w, e, Writer::i32))?,
            Param::Int8(v) => elements(w, v, |w, e| present(w, e, Writer::i64))?,
            Param::Float8(v) => elements(w, v, |w, e| present(w, e, Writer::f64))?,
            Param::Bool(v) => elements(w, v, |w, e| present(w, e, Writer::bool))?,
        }
    }
    drop(params);
    let plan = prepared.into_plan();
    w.i64(PENDING.insert((PendingEnqueue::new(requests, plan), describe_keys)));
    Ok(())
}

/// `nativeResolveEnqueue(pending, list of row)` → as `nativeEnqueue`, from the rows the prepared
/// statement returned, with key views when it was prepared asking for them. A row: i64 jobId, bool created, text-or-null
/// conflict, text-or-null decision. A conflict row throws as `nativeEnqueue` would. The pending
/// enqueue is gone afterwards.
pub(crate) fn resolve_enqueue(handle: i64, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let pending = PENDING
        .remove(handle)
        .ok_or(BridgeError::Closed("prepared enqueue"))?;
    let (pending, describe_keys) = &*pending;
    let n = r.count("rows")?;
    let mut rows = Vec::with_capacity(n);
    for _ in 0..n {
        rows.push(EnqueueRow {
            job_id: r.i64("jobId")?,
            created: r.bool("created")?,
            conflict: r.opt_string("conflict")?,
            decision: r.opt_string("decision")?,
        });
    }
    let results = pending.resolve(&rows)?;
    write_enqueued(w, &results, describe_keys.then(|| pending.requests()))
}

/// `nativeDiscardEnqueue(pending, ∅)` → ∅: forgets a prepared enqueue whose statement failed.
pub(crate) fn discard_enqueue(handle: i64, _: &mut Reader<'_>, _: &mut Writer) -> BridgeResult<()> {
    PENDING.remove(handle);
    Ok(())
}

fn elements<T>(
    w: &mut Writer,
    values: &[T],
    mut write: impl FnMut(&mut Writer, &T) -> BridgeResult<()>,
) -> BridgeResult<()> {
    w.count(values.len())?;
    values.iter().try_for_each(|v| write(w, v))
}

fn present<T: Copy>(
    w: &mut Writer,
    value: &Option<T>,
    write: fn(&mut Writer, T),
) -> BridgeResult<()> {
    w.bool(value.is_some());
    if let Some(v) = *value {
        write(w, v);
    }
    Ok(())
}

fn job_requests(r: &mut Reader<'_>) -> BridgeResult<Vec<JobRequest>> {
    let n = r.count("jobs")?;
    (0..n).map(|_| job_request(r)).collect()
}

/// One entry, field by field as `flexiq_core::request::fields` declares them.
fn job_request(r: &mut Reader<'_>) -> BridgeResult<JobRequest> {
    let mut draft = Draft::default();
    for (name, wire) in fields::wire_layout() {
        let d = &mut draft;
        match wire {
            Wire::Bool(set) => set(d, r.bool(name)?),
            Wire::I32(set) => set(d, r.i32(name)?),
            Wire::I64(set) => set(d, r.i64(name)?),
            Wire::F64(set) => set(d, r.f64(name)?),
            Wire::OptI64(set) => set(d, r.opt_i64(name)?),
            Wire::Text(set) => set(d, r.string(name)?),
            Wire::OptText(set) => set(d, r.opt_string(name)?),
            Wire::Texts(set) => set(d, r.strings(name)?),
            Wire::Bytes(set) => set(d, r.bytes(name)?.to_vec()),
            Wire::OptBytes(set) => set(d, r.opt_bytes(name)?.map(<[u8]>::to_vec)),
        }
    }
    Ok(draft.finish()?)
}

/// Each entry's job and outcome; with `keys`, the entries, the preview and digest of each
/// entry's key after it.
fn write_enqueued(
    w: &mut Writer,
    results: &[Enqueued],
    keys: Option<&[JobRequest]>,
) -> BridgeResult<()> {
    w.count(results.len())?;
    for (i, result) in results.iter().enumerate() {
        let (outcome, reason) = codes::enqueue_outcome(result.outcome)?;
        w.i64(result.job_id);
        w.i32(outcome);
        w.i32(reason);
        if let Some(requests) = keys {
            let key = requests.get(i).and_then(|r| r.key.as_deref());
            w.opt_string(key.map(flexiq_core::keys::preview).as_deref())?;
            w.opt_string(
                key.map(|k| flexiq_core::keys::hex(&flexiq_core::keys::digest(k)))
                    .as_deref(),
            )?;
        }
    }
    Ok(())
}

/// `nativeGetJob(client, i64 jobId)` → bool found, then if found: i64 id, text queue, text task,
/// i32 state code, i32 priority, i32 attempt, i32 maxAttempts, list of text tags, i64 runAt,
/// i64 createdAt, optional i64 startedAt, optional i64 finishedAt (times in microseconds since
/// the epoch), text-or-null keyScope, keyPreview, keyDigest, bool keyHeld, text-or-null lastError.
pub(crate) fn get_job(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let id = r.i64("jobId")?;
    write_found(w, block_on(client.operations().get_job(id))??)
}

/// `nativeFindByKey(client, text scope, text key)` → as `nativeGetJob`. The key is hashed in
/// the core; only its digest goes to PostgreSQL.
pub(crate) fn find_by_key(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let scope = r.string("scope")?;
    let key = r.string("key")?;
    write_found(w, block_on(client.operations().find_by_key(&scope, &key))??)
}

/// `nativeListJobs(client, text-or-null queue, i32 state code (0: any), text-or-null task,
/// i32 limit, text-or-null after)` → list of jobs (each as `nativeGetJob` writes one after
/// its bool), text-or-null next cursor.
pub(crate) fn list_jobs(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let queue = r.opt_string("queue")?;
    let state = match r.i32("state")? {
        0 => None,
        code => Some(codes::job_state_named(code)?),
    };
    let query = JobQuery {
        queue,
        state,
        task: r.opt_string("task")?,
        limit: r.i32("limit")?,
        after: r.opt_string("after")?,
    };
    let page = block_on(client.operations().list_jobs(&query))??;
    w.count(page.jobs.len())?;
    for job in &page.jobs {
        write_job(w, job)?;
    }
    w.opt_string(page.next_cursor.as_deref())
}

/// `nativeThroughput(client, i64 windowMillis)` → list of (text queue, i64 minute in
/// microseconds since the epoch, i64 completed, i64 dead).
pub(crate) fn throughput(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let rows = block_on(client.operations().throughput(r.i64("window")?))??;
    w.count(rows.len())?;
    for t in &rows {
        w.string(&t.queue)?;
        w.i64(t.minute);
        w.i64(t.completed);
        w.i64(t.dead);
    }
    Ok(())
}

/// `nativeGetPayload(client, i64 jobId)` → bool found, then if found: text task, bytes payload as
/// stored, text-or-null codec (the payload codec that encoded it).
pub(crate) fn get_payload(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let stored = block_on(client.operations().get_payload(r.i64("jobId")?))??;
    w.bool(stored.is_some());
    if let Some(s) = stored {
        w.string(&s.task)?;
        w.bytes(&s.payload)?;
        w.opt_string(s.payload_codec.as_deref())?;
    }
    Ok(())
}

/// bool found, then the job if found.
fn write_found(w: &mut Writer, job: Option<JobInfo>) -> BridgeResult<()> {
    match job {
        None => w.bool(false),
        Some(job) => {
            w.bool(true);
            write_job(w, &job)?;
        }
    }
    Ok(())
}

fn write_job(w: &mut Writer, job: &JobInfo) -> BridgeResult<()> {
    w.i64(job.id);
    w.string(&job.queue)?;
    w.string(&job.task)?;
    w.i32(codes::job_state(&job.state)?);
    w.i32(job.priority);
    w.i32(job.attempt);
    w.i32(job.max_attempts);
    w.count(job.tags.len())?;
    for tag in &job.tags {
        w.string(tag)?;
    }
    w.i64(job.run_at);
    w.i64(job.created_at);
    w.opt_i64(job.started_at);
    w.opt_i64(job.finished_at);
    w.opt_string(job.key_scope.as_deref())?;
    w.opt_string(job.key_preview.as_deref())?;
    w.opt_string(job.key_digest.as_deref())?;
    w.bool(job.key_held);
    w.opt_string(job.last_error.as_deref())?;
    w.opt_string(job.payload_codec.as_deref())
}

/// `nativeCancel(client, i64 jobId)` → bool: whether the job was pending.
pub(crate) fn cancel(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    w.bool(block_on(client.operations().cancel(r.i64("jobId")?))??);
    Ok(())
}

/// `nativePurge(client, i64 jobId)` → bool: whether the job existed and was not running.
pub(crate) fn purge(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    w.bool(block_on(client.operations().purge(r.i64("jobId")?))??);
    Ok(())
}

/// `nativeMarkCompleted(client, i64 jobId)` → bool: whether the job was pending or running.
pub(crate) fn mark_completed(
    client: &Client,
    r: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    w.bool(block_on(
        client.operations().mark_completed(r.i64("jobId")?),
    )??);
    Ok(())
}

/// `nativeExpireKeys(client, ∅)` → i64 bindings removed.
pub(crate) fn expire_keys(client: &Client, _: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let removed = block_on(client.operations().expire_keys())??;
    w.i64(i64::try_from(removed).unwrap_or(i64::MAX));
    Ok(())
}

/// `nativeSetRateLimit(client, bool ofQueue, text name, i32 starts, i64 periodMillis)` → ∅.
pub(crate) fn set_rate_limit(
    client: &Client,
    r: &mut Reader<'_>,
    _: &mut Writer,
) -> BridgeResult<()> {
    let target = rate_target(r)?;
    let starts = r.i32("starts")?;
    let period_ms = r.i64("period")?;
    block_on(
        client
            .operations()
            .set_rate_limit(&target, starts, period_ms),
    )??;
    Ok(())
}

/// `nativeRemoveRateLimit(client, bool ofQueue, text name)` → bool removed.
pub(crate) fn remove_rate_limit(
    client: &Client,
    r: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let target = rate_target(r)?;
    w.bool(block_on(client.operations().remove_rate_limit(&target))??);
    Ok(())
}

/// `nativePauseQueue(client, text queue)` → bool paused now (false: it was paused already).
pub(crate) fn pause_queue(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let queue = r.string("queue")?;
    w.bool(block_on(client.operations().pause_queue(&queue))??);
    Ok(())
}

/// `nativeResumeQueue(client, text queue)` → bool resumed now (false: it was not paused).
pub(crate) fn resume_queue(
    client: &Client,
    r: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let queue = r.string("queue")?;
    w.bool(block_on(client.operations().resume_queue(&queue))??);
    Ok(())
}

/// `nativePausedQueues(client, ∅)` → list of (text queue, i64 paused at µs).
pub(crate) fn paused_queues(
    client: &Client,
    _: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let paused = block_on(client.operations().paused_queues())??;
    w.count(paused.len())?;
    for p in &paused {
        w.string(&p.queue)?;
        w.i64(p.paused_at_us);
    }
    Ok(())
}

/// `nativeAttempts(client, i64 jobId)` → list of (i32 attempt, i64 startedAt µs, optional i64
/// finishedAt µs, text-or-null worker, text outcome, text-or-null error).
pub(crate) fn attempts(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let attempts = block_on(client.operations().attempts(r.i64("jobId")?))??;
    w.count(attempts.len())?;
    for a in &attempts {
        w.i32(a.attempt);
        w.i64(a.started_at_us);
        w.opt_i64(a.finished_at_us);
        w.opt_string(a.worker.as_deref())?;
        w.string(&a.outcome)?;
        w.opt_string(a.error.as_deref())?;
    }
    Ok(())
}

/// `nativeListWorkers(client, ∅)` → list of (text id, text name, text host, i64 pid, list of
/// text queues, list of text tasks, i32 concurrency, i64 leaseMillis, text version, i64
/// startedAt µs, i64 heartbeatAt µs).
pub(crate) fn list_workers(
    client: &Client,
    _: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let workers = block_on(client.operations().workers())??;
    w.count(workers.len())?;
    for worker in &workers {
        w.string(&worker.id)?;
        w.string(&worker.name)?;
        w.string(&worker.host)?;
        w.i64(worker.pid);
        for list in [&worker.queues, &worker.tasks] {
            w.count(list.len())?;
            for item in list {
                w.string(item)?;
            }
        }
        w.i32(worker.concurrency);
        w.i64(worker.lease_ms);
        w.string(&worker.version)?;
        w.i64(worker.started_at_us);
        w.i64(worker.heartbeat_at_us);
    }
    Ok(())
}

/// A bulk action's filter: i32 state code, text-or-null queue, text-or-null task, optional i64
/// created from and optional i64 created before (µs since the epoch).
fn job_filter(r: &mut Reader<'_>) -> BridgeResult<JobFilter> {
    Ok(JobFilter {
        state: codes::job_state_named(r.i32("state")?)?,
        queue: r.opt_string("queue")?,
        task: r.opt_string("task")?,
        created_from_us: r.opt_i64("createdFrom")?,
        created_before_us: r.opt_i64("createdBefore")?,
    })
}

/// `nativeCountMatching(client, filter)` → i64 jobs the filter selects now.
pub(crate) fn count_matching(
    client: &Client,
    r: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let filter = job_filter(r)?;
    w.i64(block_on(client.operations().count_matching(&filter))??);
    Ok(())
}

/// `nativeBulk(client, i32 action (1 cancel, 2 purge, 3 redrive), filter, text-or-null redrive
/// key)` → (i64 selected, i64 changed, i64 batches).
pub(crate) fn bulk(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let code = r.i32("action")?;
    let filter = job_filter(r)?;
    let key = r.opt_string("redriveKey")?;
    let action = match (code, key) {
        (1, _) => BulkAction::Cancel,
        (2, _) => BulkAction::Purge,
        (3, Some(key)) => BulkAction::Redrive { key },
        _ => {
            return Err(BridgeError::BadArgument(format!(
                "bulk action {code} is not one FlexiQ knows (or a redrive without its key)"
            )))
        }
    };
    let outcome = block_on(client.operations().bulk(&action, &filter))??;
    let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    w.i64(count(outcome.selected));
    w.i64(count(outcome.changed));
    w.i64(count(outcome.batches));
    Ok(())
}

/// `nativeDeclareSchedule(client, text name, text cron, text zone, text task, text queue,
/// bytes-or-null payload, text-or-null options)` → bool paused.
pub(crate) fn declare_schedule(
    client: &Client,
    r: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let mut declaration = ScheduleDeclaration {
        name: r.string("name")?,
        cron: r.string("cron")?,
        zone: r.string("zone")?,
        task: r.string("task")?,
        queue: r.string("queue")?,
        trigger: None,
    };
    let payload = r.opt_bytes("payload")?.map(<[u8]>::to_vec);
    let options = r.opt_string("options")?;
    declaration.trigger = payload.zip(options);
    w.bool(block_on(
        client.operations().declare_schedule(&declaration),
    )??);
    Ok(())
}

/// `nativeListSchedules(client, ∅)` → list of (text name, text cron, text zone, text task, text
/// queue, bool triggerable, i64 seenAt µs, optional i64 pausedAt µs).
pub(crate) fn list_schedules(
    client: &Client,
    _: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let schedules = block_on(client.operations().schedules())??;
    w.count(schedules.len())?;
    for s in &schedules {
        for text in [&s.name, &s.cron, &s.zone, &s.task, &s.queue] {
            w.string(text)?;
        }
        w.bool(s.triggerable);
        w.i64(s.seen_at_us);
        w.opt_i64(s.paused_at_us);
    }
    Ok(())
}

/// `nativePauseSchedule(client, text name, bool paused)` → bool changed.
pub(crate) fn pause_schedule(
    client: &Client,
    r: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let name = r.string("name")?;
    let paused = r.bool("paused")?;
    w.bool(block_on(
        client.operations().pause_schedule(&name, paused),
    )??);
    Ok(())
}

/// `nativeTriggerSchedule(client, text name, text tickKey, i64 retentionMillis)` → bool found,
/// then i64 job id and text outcome.
pub(crate) fn trigger_schedule(
    client: &Client,
    r: &mut Reader<'_>,
    w: &mut Writer,
) -> BridgeResult<()> {
    let name = r.string("name")?;
    let key = r.string("tickKey")?;
    let retention = r.i64("retention")?;
    let job = block_on(client.operations().trigger_schedule(&name, &key, retention))??;
    w.bool(job.is_some());
    if let Some((id, outcome)) = job {
        w.i64(id);
        w.string(&outcome)?;
    }
    Ok(())
}

fn rate_target(r: &mut Reader<'_>) -> BridgeResult<RateTarget> {
    let of_queue = r.bool("ofQueue")?;
    let name = r.string("name")?;
    Ok(if of_queue {
        RateTarget::Queue(name)
    } else {
        RateTarget::ConcurrencyKey(name)
    })
}

/// `nativeCountJobs(client, i64 finishedWithinMillis)` → list of (text queue, i32 state code,
/// i64 count).
pub(crate) fn count_jobs(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let counts = block_on(client.operations().count_jobs(r.i64("finishedWithin")?))??;
    w.count(counts.len())?;
    for c in &counts {
        w.string(&c.queue)?;
        w.i32(codes::job_state(&c.state)?);
        w.i64(c.count);
    }
    Ok(())
}

/// `nativeRedrive(client, i64 jobId, text redriveKey)` → i32 outcome code, optional i64 id of
/// the job holding the key.
pub(crate) fn redrive(client: &Client, r: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let id = r.i64("jobId")?;
    let key = r.string("redriveKey")?;
    let redrive = block_on(client.operations().redrive(id, &key))??;
    w.i32(codes::redrive_outcome(&redrive)?);
    w.opt_i64(match redrive {
        flexiq_core::Redrive::KeyHeld { holder } => Some(holder),
        _ => None,
    });
    Ok(())
}
