package io.flexiq.internal.client;

import io.flexiq.FlexiQ;
import io.flexiq.JobCount;
import io.flexiq.JobEvent;
import io.flexiq.JobInfo;
import io.flexiq.JobPage;
import io.flexiq.JobQuery;
import io.flexiq.Maintenance;
import io.flexiq.MaintenanceReport;
import io.flexiq.AttemptInfo;
import io.flexiq.BulkResult;
import io.flexiq.JobFilter;
import io.flexiq.PausedQueue;
import io.flexiq.RateLimit;
import io.flexiq.RegisteredWorker;
import io.flexiq.RedriveOutcome;
import io.flexiq.RedriveResult;
import io.flexiq.Throughput;
import io.flexiq.internal.ApiAccess;
import io.flexiq.internal.Limits;
import io.flexiq.internal.NativeBridge;
import io.flexiq.internal.enqueue.StoredPayloads;
import io.flexiq.internal.observability.Listeners;
import io.flexiq.internal.worker.Rescues;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a client does to its jobs besides enqueueing them, for {@link FlexiQ}'s methods of the
 * same names: it reads them (by id, by key, by page, counted, their throughput and payloads),
 * changes them (cancel, purge, mark completed, redrive: each change published to the client's
 * listeners), releases keys, runs a maintenance pass now, keeps rate limits and grants roles.
 * Each call checks its arguments, then makes one native call. {@link FlexiQ} checks that it is
 * open first.
 */
public final class Operations {
    private static final ApiAccess API = ApiAccess.get();
    private static final Logger LOG = LoggerFactory.getLogger(FlexiQ.class);

    private final long handle;
    private final StoredPayloads storedPayloads;
    /** The client's maintenance options, whose retentions {@link #runMaintenance()} applies. */
    private final Maintenance maintenance;
    private final Listeners listeners;

    public Operations(long handle, StoredPayloads storedPayloads, Maintenance maintenance, Listeners listeners) {
        this.handle = handle;
        this.storedPayloads = storedPayloads;
        this.maintenance = maintenance;
        this.listeners = listeners;
    }

    public Optional<JobInfo> getJob(String jobId) {
        NativeBridge.Job job = NativeBridge.getJob(handle, parseId(jobId));
        return job == null ? Optional.empty() : Optional.of(jobInfo(job));
    }

    public Optional<JobInfo> findByKey(String scope, String key) {
        NativeBridge.Job job = NativeBridge.findByKey(handle, Limits.name("scope", scope), Limits.key(key));
        return job == null ? Optional.empty() : Optional.of(jobInfo(job));
    }

    public JobPage listJobs(JobQuery query) {
        Objects.requireNonNull(query, "query");
        NativeBridge.Page page = NativeBridge.listJobs(handle, query.queue().orElse(null),
                query.state().orElse(null), query.task().orElse(null), query.limit(), query.after().orElse(null));
        List<JobInfo> jobs = new ArrayList<>(page.jobs().size());
        for (NativeBridge.Job j : page.jobs()) {
            jobs.add(jobInfo(j));
        }
        return new JobPage(jobs, Optional.ofNullable(page.nextCursor()));
    }

    public List<JobCount> countJobs(Duration finishedWithin) {
        return NativeBridge.countJobs(handle, window("finishedWithin", finishedWithin));
    }

    public List<Throughput> throughput(Duration window) {
        List<Throughput> out = new ArrayList<>();
        for (NativeBridge.Finished f : NativeBridge.throughput(handle, window("window", window))) {
            out.add(new Throughput(f.queue(), f.minute(), f.completed(), f.dead()));
        }
        return out;
    }

    public Optional<String> getPayload(String jobId) {
        long id = parseId(jobId);
        NativeBridge.StoredPayload stored = NativeBridge.getPayload(handle, id);
        if (stored == null) {
            return Optional.empty();
        }
        return Optional.of(new String(storedPayloads.decode(id, stored.task(), stored.bytes(), stored.codec()),
                StandardCharsets.UTF_8));
    }

    /** A window to look back over, in milliseconds: from 1 ms to 7 days. */
    private static long window(String what, Duration window) {
        if (window == null || window.compareTo(Duration.ofMillis(1)) < 0 || window.compareTo(Duration.ofDays(7)) > 0) {
            throw new IllegalArgumentException(what + " must be between 1 ms and 7 days, got " + window);
        }
        return window.toMillis();
    }

    public boolean cancel(String jobId) {
        long id = parseId(jobId);
        boolean cancelled = NativeBridge.cancel(handle, id);
        if (cancelled && listeners.active()) {
            publish(JobEvent.Kind.CANCELLED, lookUp(id));
        }
        return cancelled;
    }

    public boolean purge(String jobId) {
        long id = parseId(jobId);
        // Read first, for the listeners: a job's task and queue never change, and after the purge there is no job.
        NativeBridge.Job before = listeners.active() ? lookUp(id) : null;
        boolean purged = NativeBridge.purge(handle, id);
        if (purged) {
            publish(JobEvent.Kind.PURGED, before);
        }
        return purged;
    }

    public boolean markCompleted(String jobId) {
        return NativeBridge.markCompleted(handle, parseId(jobId));
    }

    public long expireKeys() {
        return NativeBridge.expireKeys(handle);
    }

    public MaintenanceReport runMaintenance() {
        NativeBridge.MaintenancePass pass = NativeBridge.runMaintenance(handle, maintenance);
        Rescues.report(pass.rescued(), listeners);
        return pass.report();
    }

    public void setRateLimit(RateLimit limit) {
        Objects.requireNonNull(limit, "limit");
        NativeBridge.setRateLimit(handle, limit.ofQueue(), limit.name(), limit.starts(), limit.period());
    }

    public boolean removeQueueRateLimit(String queue) {
        return NativeBridge.removeRateLimit(handle, true, Limits.name("queue", queue));
    }

    public boolean removeConcurrencyKeyRateLimit(String key) {
        return NativeBridge.removeRateLimit(handle, false, Limits.name("concurrencyKey", key));
    }

    public boolean pauseQueue(String queue) {
        return NativeBridge.pauseQueue(handle, Limits.name("queue", queue));
    }

    public boolean resumeQueue(String queue) {
        return NativeBridge.resumeQueue(handle, Limits.name("queue", queue));
    }

    public List<PausedQueue> pausedQueues() {
        return NativeBridge.pausedQueues(handle);
    }

    public long countMatching(JobFilter filter) {
        return NativeBridge.countMatching(handle, Objects.requireNonNull(filter, "filter"));
    }

    public BulkResult bulk(int action, JobFilter filter, String redriveKey) {
        Objects.requireNonNull(filter, "filter");
        BulkResult result = NativeBridge.bulk(handle, action, filter, redriveKey);
        LOG.info("bulk {} of {}: {} jobs selected, {} changed, in {} statements",
                action == 1 ? "cancel" : action == 2 ? "purge" : "redrive", filter, result.selected(), result.changed(),
                result.batches());
        return result;
    }

    public List<AttemptInfo> attempts(String jobId) {
        return NativeBridge.attempts(handle, parseId(jobId));
    }

    public List<RegisteredWorker> workers() {
        return NativeBridge.listWorkers(handle);
    }

    public RedriveResult redrive(String jobId, String redriveKey) {
        Limits.key("redriveKey", redriveKey);
        long id = parseId(jobId);
        RedriveResult result = NativeBridge.redrive(handle, id, redriveKey);
        if (result.outcome() == RedriveOutcome.REDRIVEN && listeners.active()) {
            publish(JobEvent.Kind.REDRIVEN, lookUp(id));
        }
        return result;
    }

    /**
     * The job, for its listeners' event, or null: a change that took effect is not undone because
     * its event could not be completed.
     */
    private NativeBridge.Job lookUp(long id) {
        try {
            return NativeBridge.getJob(handle, id);
        } catch (RuntimeException e) {
            LOG.warn("job {} changed, but its listeners miss the event: reading the job failed: {}", id,
                    e.getMessage());
            return null;
        }
    }

    private void publish(JobEvent.Kind kind, NativeBridge.Job job) {
        if (job != null) {
            listeners.changed(kind, job.id(), job.task(), job.queue(), job.attempt(), job.maxAttempts(), null);
        }
    }

    public void grantProducer(String role) {
        requireRole(role);
        NativeBridge.grantProducer(handle, role);
    }

    public void grantWorker(String role) {
        requireRole(role);
        NativeBridge.grantWorker(handle, role);
    }

    private static void requireRole(String role) {
        if (role == null || role.isEmpty()) {
            throw new IllegalArgumentException("role must not be empty");
        }
    }

    private static long parseId(String jobId) {
        try {
            return Long.parseLong(Objects.requireNonNull(jobId, "jobId"));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a FlexiQ job id: " + jobId, e);
        }
    }

    private static JobInfo jobInfo(NativeBridge.Job j) {
        return API.jobInfo(Long.toString(j.id()), j.queue(), j.task(), j.state(), j.priority(), j.attempt(),
                j.maxAttempts(), j.tags(), j.runAt(), j.createdAt(), j.startedAt(), j.finishedAt(), j.keyScope(),
                j.keyPreview(), j.keyDigest(), j.keyHeld(), j.lastError(), j.payloadCodec());
    }
}
