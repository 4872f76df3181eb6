package io.flexiq.dashboard;

import static io.flexiq.dashboard.Html.esc;

import io.flexiq.AttemptInfo;
import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.JobCount;
import io.flexiq.JobInfo;
import io.flexiq.JobPage;
import io.flexiq.JobQuery;
import io.flexiq.JobState;
import io.flexiq.PausedQueue;
import io.flexiq.PayloadDecodeException;
import io.flexiq.RedriveResult;
import io.flexiq.RegisteredWorker;
import io.flexiq.StorageUnavailableException;
import io.flexiq.Throughput;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The dashboard's pages and actions, whatever server carries them. GETs only read; every change
 * is a POST answered by a redirect. Keys appear as scope, preview and digest only: a raw key
 * reaches the pages solely in a search's POST body, and is hashed by FlexiQ, never echoed.
 */
final class Pages {
    private static final Pattern JOB = Pattern.compile("/jobs/(\\d{1,19})");
    private static final Pattern ACTION = Pattern.compile("/jobs/(\\d{1,19})/(redrive|cancel|purge)");
    private static final Pattern QUEUE_ACTION = Pattern.compile("/queues/(pause|resume)");
    private static final Pattern SCHEDULE_ACTION = Pattern.compile("/schedules/(pause|resume|trigger)");
    private static final Map<String, String> NOTICES = Map.ofEntries(
            Map.entry("paused", "Paused: no job of the queue starts until it is resumed; enqueues go on."),
            Map.entry("already_paused", "The queue was paused already: nothing changed."),
            Map.entry("resumed", "Resumed: the queue's jobs start again."),
            Map.entry("not_paused", "The queue was not paused: nothing changed."),
            Map.entry("redriven", "Redriven: the job is due again, its attempts starting over."),
            Map.entry("replayed", "This redrive key already redrove this job: nothing changed."),
            Map.entry("not_dead", "Not redriven: the job is not dead-lettered."),
            Map.entry("cancelled", "Cancelled."),
            Map.entry("not_cancelled", "Not cancelled: only a pending job can be cancelled."),
            Map.entry("not_purged", "Not purged: a running job cannot be purged."),
            Map.entry("purged", "Purged: the job is deleted, and its key with it."),
            Map.entry("found", "The job holding that key, or that held it last."),
            Map.entry("triggered", "Triggered: the schedule's job is enqueued."),
            Map.entry("trigger_replayed", "This trigger was submitted before: this is the job it enqueued."));

    private static final int PAGE_SIZE = 50;
    private static final Duration SPARKLINE_WINDOW = Duration.ofHours(1);
    private static final System.Logger LOG = System.getLogger(Pages.class.getName());

    private final FlexiQ flexiq;
    private final PayloadRedactor redactor;
    private final BulkPages bulk;
    private final SchedulePages schedules;

    Pages(FlexiQ flexiq, PayloadRedactor redactor) {
        this.flexiq = Objects.requireNonNull(flexiq, "flexiq");
        this.redactor = Objects.requireNonNull(redactor, "redactor");
        this.bulk = new BulkPages(flexiq);
        this.schedules = new SchedulePages(flexiq);
    }

    /** The page or action's answer; a failure of FlexiQ becomes an error page, logged. */
    PageResponse handle(PageRequest request) {
        try {
            return route(request);
        } catch (StorageUnavailableException e) {
            LOG.log(System.Logger.Level.WARNING, "a dashboard page failed: {0}", e.getMessage());
            return PageResponse.html(503, Html.page(request, "Database unavailable", "",
                    "<p class=\"problem\">" + esc(e.getMessage()) + "</p>"));
        } catch (IllegalArgumentException e) {
            // FlexiQ's refusal of a value (a job id out of range, say): its message names the rule.
            return PageResponse.html(400, Html.page(request, "Refused", "", "<p class=\"problem\">"
                    + esc(e.getMessage()) + "</p>"));
        } catch (RuntimeException e) {
            // Its message may carry what the page must not show (a redactor's failure, say): logged only.
            LOG.log(System.Logger.Level.ERROR, "a dashboard page failed", e);
            return PageResponse.html(500, Html.page(request, "Error", "",
                    "<p class=\"problem\">The page failed; the service's log says why.</p>"));
        }
    }

    private PageResponse route(PageRequest request) {
        String path = request.path();
        Matcher action = ACTION.matcher(path);
        if (action.matches()) {
            return request.isPost() ? act(request, action.group(1), action.group(2)) : notAllowed();
        }
        Matcher queueAction = QUEUE_ACTION.matcher(path);
        if (queueAction.matches()) {
            return request.isPost() ? switchQueue(request, queueAction.group(1)) : notAllowed();
        }
        if (path.equals("/search")) {
            return request.isPost() ? search(request) : notAllowed();
        }
        Matcher scheduleAction = SCHEDULE_ACTION.matcher(path);
        if (scheduleAction.matches()) {
            return request.isPost() ? schedules.act(request, scheduleAction.group(1)) : notAllowed();
        }
        if (path.equals("/bulk")) {
            return request.isPost() ? bulk.run(request) : bulk.review(request);
        }
        if (request.isPost()) {
            return notAllowed();
        }
        if (path.equals("/") || path.isEmpty()) {
            return queues(request);
        }
        if (path.equals("/jobs")) {
            return jobs(request);
        }
        if (path.equals("/workers")) {
            return workers(request);
        }
        if (path.equals("/schedules")) {
            return schedules.list(request);
        }
        if (path.equals("/charts")) {
            return charts(request);
        }
        Matcher job = JOB.matcher(path);
        if (job.matches()) {
            return job(request, job.group(1));
        }
        return PageResponse.html(404, Html.page(request, "Not found", "", "<p>No such page.</p>"));
    }

    /**
     * Each queue's counts by state, a sparkline of the jobs it finished per minute, and whether
     * it is paused, with the button that pauses or resumes it.
     */
    private PageResponse queues(PageRequest request) {
        Map<String, Map<JobState, Long>> byQueue = new TreeMap<>();
        Map<String, Instant> paused = new TreeMap<>();
        for (PausedQueue queue : flexiq.pausedQueues()) {
            paused.put(queue.queue(), queue.pausedAt());
            byQueue.computeIfAbsent(queue.queue(), q -> new TreeMap<>());
        }
        for (JobCount count : flexiq.countJobs()) {
            byQueue.computeIfAbsent(count.queue(), q -> new TreeMap<>()).merge(count.state(), count.count(), Long::sum);
        }
        Map<String, Finished> finished = new TreeMap<>();
        Instant thisMinute = Instant.now().truncatedTo(ChronoUnit.MINUTES);
        for (Throughput minute : flexiq.throughput(SPARKLINE_WINDOW)) {
            byQueue.computeIfAbsent(minute.queue(), q -> new TreeMap<>());
            finished.computeIfAbsent(minute.queue(), q -> new Finished()).add(minute, thisMinute);
        }
        StringBuilder body = new StringBuilder("<table><thead><tr><th>Queue</th>");
        for (JobState state : JobState.values()) {
            boolean recent = state == JobState.COMPLETED || state == JobState.CANCELLED;
            body.append("<th>").append(Html.capitalized(state)).append(recent ? " <span class=\"muted\">(1 h)</span>" : "")
                    .append("</th>");
        }
        body.append("<th>Finished per minute, last hour</th><th>Status</th></tr></thead><tbody>");
        byQueue.forEach((queue, counts) -> {
            body.append("<tr><td>").append(esc(queue)).append("</td>");
            for (JobState state : JobState.values()) {
                long count = counts.getOrDefault(state, 0L);
                body.append("<td class=\"n\"><a href=\"")
                        .append(esc(request.link("/jobs?state=" + Html.state(state) + "&queue=" + Html.query(queue))))
                        .append("\">").append(count).append("</a></td>");
            }
            Finished line = finished.getOrDefault(queue, new Finished());
            body.append("<td>").append(Sparkline.svg(line.perMinute, "Jobs of " + queue + " finished per minute"))
                    .append(" <span class=\"muted\">").append(line.completed).append(" completed, ").append(line.dead)
                    .append(" dead</span></td><td>").append(queueSwitch(request, queue, paused.get(queue)))
                    .append("</td></tr>");
        });
        body.append("</tbody></table>");
        if (byQueue.isEmpty()) {
            body.append("<p class=\"muted\">No jobs yet.</p>");
        }
        return PageResponse.html(200, Html.page(request, "Queues", banner(request), body.toString()));
    }

    /**
     * Jobs completed and dead-lettered per minute, a chart per queue, over the last hour or day
     * ({@code window=hour|day}).
     */
    private PageResponse charts(PageRequest request) {
        boolean day = "day".equals(request.param("window"));
        Duration window = day ? Duration.ofDays(1) : Duration.ofHours(1);
        int minutes = (int) window.toMinutes();
        Instant thisMinute = Instant.now().truncatedTo(ChronoUnit.MINUTES);
        Map<String, long[][]> byQueue = new TreeMap<>();
        for (Throughput minute : flexiq.throughput(window)) {
            long ago = Duration.between(minute.minute(), thisMinute).toMinutes();
            int slot = (int) Math.max(0, Math.min(minutes - 1, minutes - 1 - ago));
            long[][] series = byQueue.computeIfAbsent(minute.queue(), q -> new long[2][minutes]);
            series[0][slot] += minute.completed();
            series[1][slot] += minute.dead();
        }
        StringBuilder body = new StringBuilder("<nav class=\"pages\">");
        body.append(day ? "<a href=\"" + esc(request.link("/charts?window=hour")) + "\">Last hour</a> · <b>Last day</b>"
                : "<b>Last hour</b> · <a href=\"" + esc(request.link("/charts?window=day")) + "\">Last day</a>");
        body.append("</nav>");
        if (byQueue.isEmpty()) {
            body.append("<p class=\"muted\">No job finished in this window.</p>");
        }
        Instant first = thisMinute.minus(Duration.ofMinutes(minutes - 1));
        byQueue.forEach((queue, series) -> body.append("<h2>").append(esc(queue)).append("</h2>")
                .append(Chart.svg(series[0], series[1], first, thisMinute,
                        "Jobs of " + queue + " per minute, last " + (day ? "day" : "hour"))));
        return PageResponse.html(200, Html.page(request, "Finished per minute", "", body.toString()));
    }

    /**
     * The running workers of every process, with what they run and their last heartbeat; a
     * worker whose process died stays until maintenance finds its heartbeats stopped.
     */
    private PageResponse workers(PageRequest request) {
        List<RegisteredWorker> workers = flexiq.workers();
        StringBuilder body = new StringBuilder();
        if (workers.isEmpty()) {
            body.append("<p class=\"muted\">No worker is running.</p>");
        } else {
            Instant now = Instant.now();
            body.append("<table><thead><tr><th>Host</th><th>Process</th><th>Worker</th><th>Queues</th><th>Tasks</th>")
                    .append("<th>Concurrency</th><th>Lease</th><th>Version</th><th>Started</th>")
                    .append("<th>Last heartbeat</th></tr></thead><tbody>");
            for (RegisteredWorker w : workers) {
                long ago = Math.max(0, Duration.between(w.lastHeartbeat(), now).toSeconds());
                body.append("<tr><td>").append(esc(w.host())).append("</td><td class=\"n\">").append(w.pid())
                        .append("</td><td>").append(esc(w.name())).append("</td><td>")
                        .append(esc(String.join(", ", w.queues()))).append("</td><td>")
                        .append(esc(String.join(", ", w.tasks()))).append("</td><td class=\"n\">")
                        .append(w.concurrency()).append("</td><td class=\"n\">").append(w.lease().toMillis())
                        .append(" ms</td><td>").append(esc(w.version())).append("</td><td>")
                        .append(Html.time(w.startedAt())).append("</td><td>").append(Html.time(w.lastHeartbeat()))
                        .append(" <span class=\"muted\">(").append(ago).append(" s ago)</span></td></tr>");
            }
            body.append("</tbody></table>");
        }
        body.append("<p class=\"muted\">Each worker heartbeats every third of its lease; maintenance removes one")
                .append(" that has not for a whole lease, and its jobs are rescued as their leases pass.</p>");
        return PageResponse.html(200, Html.page(request, "Workers", "", body.toString()));
    }

    /** A queue's status, and the button that pauses a running queue or resumes a paused one. */
    private static String queueSwitch(PageRequest request, String queue, Instant pausedAt) {
        String field = "<input type=\"hidden\" name=\"queue\" value=\"" + esc(queue) + "\">";
        if (pausedAt == null) {
            return "Running " + Html.form(request, "/queues/pause", field, "Pause");
        }
        return "<span class=\"dead\">Paused</span> <span class=\"muted\">since " + Html.time(pausedAt)
                + "</span> " + Html.form(request, "/queues/resume", field, "Resume");
    }

    /**
     * Pauses or resumes the queue a form names. Submitting the same form twice leaves the queue
     * as the first submit did; the notice then says nothing changed.
     */
    private PageResponse switchQueue(PageRequest request, String action) {
        String queue = request.param("queue");
        if (queue == null || queue.isEmpty()) {
            return PageResponse.html(400, Html.page(request, "Queues", "",
                    "<p class=\"problem\">The form names no queue: go back and use a queue's button.</p>"));
        }
        String notice = action.equals("pause")
                ? flexiq.pauseQueue(queue) ? "paused" : "already_paused"
                : flexiq.resumeQueue(queue) ? "resumed" : "not_paused";
        return PageResponse.seeOther(request.link("/?notice=" + notice));
    }

    /** A queue's finished jobs over the sparkline's window, a slot per minute, the current one last. */
    private static final class Finished {
        final long[] perMinute = new long[(int) SPARKLINE_WINDOW.toMinutes()];
        long completed;
        long dead;

        void add(Throughput minute, Instant thisMinute) {
            long ago = Duration.between(minute.minute(), thisMinute).toMinutes();
            int slot = (int) Math.max(0, Math.min(perMinute.length - 1, perMinute.length - 1 - ago));
            perMinute[slot] += minute.completed() + minute.dead();
            completed += minute.completed();
            dead += minute.dead();
        }
    }

    /** One page of jobs, newest first, by state, queue and task; each filter optional. */
    private PageResponse jobs(PageRequest request) {
        JobState state = state(request.param("state"));
        String queue = given(request.param("queue"));
        String task = given(request.param("task"));
        String after = given(request.param("after"));
        JobQuery.Builder query = JobQuery.builder().limit(PAGE_SIZE);
        if (state != null) {
            query.state(state);
        }
        if (queue != null) {
            query.queue(queue);
        }
        if (task != null) {
            query.task(task);
        }
        if (after != null) {
            query.after(after);
        }
        String title = state == null ? "Jobs"
                : state == JobState.DEAD ? "Dead letters" : Html.capitalized(state) + " jobs";
        JobPage page = flexiq.listJobs(query.build());
        StringBuilder body = new StringBuilder();
        body.append("<form method=\"get\" action=\"").append(esc(request.link("/jobs")))
                .append("\" class=\"filters\">");
        if (state != null) {
            body.append("<input type=\"hidden\" name=\"state\" value=\"").append(Html.state(state)).append("\">");
        }
        body.append("<input name=\"queue\" placeholder=\"queue\" value=\"").append(esc(queue)).append("\">")
                .append("<input name=\"task\" placeholder=\"task\" value=\"").append(esc(task)).append("\">")
                .append("<button type=\"submit\">Filter</button></form>");
        if (page.jobs().isEmpty()) {
            body.append("<p class=\"muted\">No jobs here.</p>");
        } else {
            body.append("<table><thead><tr><th>Job</th><th>Queue</th><th>Task</th><th>State</th><th>Attempts</th>")
                    .append("<th>Key</th><th>Created</th><th>Runs at</th><th>Finished</th><th>Last error</th><th></th>")
                    .append("</tr></thead><tbody>");
            for (JobInfo job : page.jobs()) {
                body.append("<tr><td><a href=\"").append(esc(request.link("/jobs/" + job.id()))).append("\">")
                        .append(esc(job.id())).append("</a></td><td>").append(esc(job.queue())).append("</td><td>")
                        .append(esc(job.task())).append("</td><td>").append(Html.capitalized(job.state()))
                        .append("</td><td class=\"n\">").append(job.attempt()).append('/').append(job.maxAttempts())
                        .append("</td><td>").append(key(job)).append("</td><td>").append(Html.time(job.createdAt()))
                        .append("</td><td>").append(Html.time(job.runAt())).append("</td><td>")
                        .append(Html.time(job.finishedAt().orElse(null))).append("</td><td>")
                        .append(esc(abbreviated(job.lastError().orElse("")))).append("</td><td>")
                        .append(rowActions(request, job)).append("</td></tr>");
            }
            body.append("</tbody></table>");
        }
        body.append("<nav class=\"pages\">");
        if (after != null) {
            body.append("<a href=\"").append(esc(request.link(listLink(state, queue, task, null))))
                    .append("\">First page</a> ");
        }
        page.nextCursor().ifPresent(next -> body.append("<a href=\"")
                .append(esc(request.link(listLink(state, queue, task, next)))).append("\">Next page</a>"));
        body.append("</nav>");
        if (state != null) {
            body.append(BulkPages.form(request, state, queue, task));
        }
        return PageResponse.html(200, Html.page(request, title, banner(request) + BulkPages.banner(request),
                body.toString()));
    }

    /**
     * The job holding (or that last held) a key. The key comes in a POST body and is hashed by
     * FlexiQ; the answer is a redirect to the job, or a page that does not repeat the key.
     */
    private PageResponse search(PageRequest request) {
        String scope = Optional.ofNullable(given(request.param("scope"))).orElse(EnqueueOptions.DEFAULT_SCOPE);
        String key = request.param("key");
        if (key == null || key.isEmpty()) {
            return PageResponse.html(400, Html.page(request, "Find by key", "",
                    "<p class=\"problem\">Type a key to find the job holding it.</p>"));
        }
        Optional<JobInfo> found = flexiq.findByKey(scope, key);
        if (found.isPresent()) {
            return PageResponse.seeOther(request.link("/jobs/" + found.get().id() + "?notice=found"));
        }
        return PageResponse.html(404, Html.page(request, "Find by key", "",
                "<p>No job holds or held that key in scope <code>" + esc(scope) + "</code>.</p>"));
    }

    private PageResponse job(PageRequest request, String id) {
        Optional<JobInfo> found = flexiq.getJob(id);
        if (found.isEmpty()) {
            return noSuchJob(request, id);
        }
        JobInfo job = found.get();
        StringBuilder body = new StringBuilder("<dl>");
        field(body, "State", "<span class=\"" + (job.state() == JobState.DEAD ? "dead" : "") + "\">"
                + Html.capitalized(job.state()) + "</span>");
        field(body, "Task", esc(job.task()));
        field(body, "Queue", esc(job.queue()));
        field(body, "Priority", Integer.toString(job.priority()));
        field(body, "Attempts", job.attempt() + " of " + job.maxAttempts());
        field(body, "Tags", esc(String.join(", ", job.tags())));
        field(body, "Created", Html.time(job.createdAt()));
        field(body, "Runs at", Html.time(job.runAt()));
        field(body, "Started", Html.time(job.startedAt().orElse(null)));
        field(body, "Finished", Html.time(job.finishedAt().orElse(null)));
        if (job.keyDigest().isPresent()) {
            field(body, "Key scope", esc(job.keyScope().orElse("")));
            field(body, "Key preview", "<code>" + esc(job.keyPreview().orElse("")) + "</code>");
            field(body, "Key digest", "<code>" + esc(job.keyDigest().get()) + "</code>");
            field(body, "Key held", job.keyHeld() ? "yes" : "no (released)");
        } else {
            field(body, "Key", "<span class=\"muted\">none</span>");
        }
        body.append("</dl>");
        body.append(payload(job));
        job.lastError().ifPresent(error -> body.append("<h2>Last error</h2><pre>").append(esc(error)).append("</pre>"));
        body.append(attempts(flexiq.attempts(job.id())));
        body.append(actions(request, job));
        return PageResponse.html(200, Html.page(request, "Job " + job.id(), banner(request), body.toString()));
    }

    /** The attempts section: each attempt's times, process, outcome and error, its trace folded. */
    private static String attempts(List<AttemptInfo> attempts) {
        if (attempts.isEmpty()) {
            return "";
        }
        StringBuilder out = new StringBuilder("<h2>Attempts</h2><table class=\"attempts\"><thead><tr><th>#</th>")
                .append("<th>Started</th><th>Ended</th><th>Worker</th><th>Outcome</th><th>Error</th></tr></thead><tbody>");
        for (AttemptInfo a : attempts) {
            out.append("<tr><td class=\"n\">").append(a.attempt()).append("</td><td>").append(Html.time(a.startedAt()))
                    .append("</td><td>").append(Html.time(a.finishedAt().orElse(null))).append("</td><td>")
                    .append(esc(a.worker().orElse(""))).append("</td><td>").append(esc(a.outcome())).append("</td><td>");
            a.error().ifPresent(error -> out.append("<details><summary>").append(esc(abbreviated(error)))
                    .append("</summary><pre>").append(esc(error)).append("</pre></details>"));
            out.append("</td></tr>");
        }
        return out.append("</tbody></table>").toString();
    }

    /**
     * The payload section: as the redactor shows it, or why it cannot be decoded; empty without a
     * job. A payload the redactor hides unread is neither fetched nor decoded.
     */
    private String payload(JobInfo job) {
        Optional<String> payload = Optional.empty();
        if (redactor.reads(job)) {
            try {
                payload = flexiq.getPayload(job.id());
            } catch (PayloadDecodeException e) {
                return "<h2>Payload</h2><p class=\"dead\">" + esc(e.getMessage()) + "</p>";
            }
            if (payload.isEmpty()) {
                return "";
            }
        }
        return "<h2>Payload</h2><pre>" + esc(redactor.redact(job, payload.orElse(null))) + "</pre>";
    }

    /** The buttons for what this job's state allows. */
    private static String actions(PageRequest request, JobInfo job) {
        StringBuilder out = new StringBuilder("<div class=\"actions\">");
        String base = "/jobs/" + job.id();
        if (job.state() == JobState.DEAD) {
            out.append(Html.form(request, base + "/redrive", "<input name=\"redriveKey\" value=\""
                    + esc(redriveKey()) + "\" size=\"44\" aria-label=\"Redrive key\">", "Redrive"));
        }
        if (job.state().isActive() && job.state() != JobState.RUNNING) {
            out.append(Html.form(request, base + "/cancel", "", "Cancel"));
        }
        if (job.state() != JobState.RUNNING) {
            out.append(Html.form(request, base + "/purge", "", "Purge"));
        }
        return out.append("</div>").toString();
    }

    private PageResponse act(PageRequest request, String id, String action) {
        String back = "/jobs/" + id;
        String notice;
        switch (action) {
            case "redrive" -> {
                String key = request.param("redriveKey");
                if (key == null || key.isBlank()) {
                    return PageResponse.html(400, Html.page(request, "Job " + id, "",
                            "<p class=\"problem\">A redrive needs a redrive key: go back and fill it in.</p>"));
                }
                RedriveResult result = flexiq.redrive(id, key);
                switch (result.outcome()) {
                    case NOT_FOUND -> {
                        return noSuchJob(request, id);
                    }
                    case KEY_HELD -> {
                        return PageResponse.seeOther(request.link(back + "?notice=key_held&holder="
                                + result.keyHolderJobId().orElse("")));
                    }
                    default -> notice = result.outcome().name().toLowerCase(java.util.Locale.ROOT);
                }
            }
            case "cancel" -> notice = flexiq.cancel(id) ? "cancelled" : "not_cancelled";
            default -> {
                if (flexiq.purge(id)) {
                    return PageResponse.seeOther(request.link("/jobs?state=dead&notice=purged"));
                }
                notice = "not_purged";
            }
        }
        return PageResponse.seeOther(request.link(back + "?notice=" + notice));
    }

    /** A list row's buttons: a dead job's redrive (with a fresh key) and purge, a pending job's cancel. */
    private static String rowActions(PageRequest request, JobInfo job) {
        String base = "/jobs/" + job.id();
        if (job.state() == JobState.DEAD) {
            return Html.form(request, base + "/redrive", "<input type=\"hidden\" name=\"redriveKey\" value=\""
                    + esc(redriveKey()) + "\">", "Redrive") + Html.form(request, base + "/purge", "", "Purge");
        }
        if (job.state().isActive() && job.state() != JobState.RUNNING) {
            return Html.form(request, base + "/cancel", "", "Cancel");
        }
        return "";
    }

    /** A key's scope and preview; the digest is on the job's page. */
    private static String key(JobInfo job) {
        return job.keyPreview().map(preview -> "<code>" + esc(preview) + "</code> <span class=\"muted\">"
                + esc(job.keyScope().orElse("")) + "</span>").orElse("");
    }

    private static String listLink(JobState state, String queue, String task, String after) {
        StringBuilder link = new StringBuilder("/jobs?");
        if (state != null) {
            link.append("state=").append(Html.state(state)).append('&');
        }
        if (queue != null) {
            link.append("queue=").append(Html.query(queue)).append('&');
        }
        if (task != null) {
            link.append("task=").append(Html.query(task)).append('&');
        }
        if (after != null) {
            link.append("after=").append(Html.query(after)).append('&');
        }
        return link.substring(0, link.length() - 1);
    }

    /** The state a list asks for, or null for every state (or a name that is none). */
    static JobState state(String name) {
        if (name == null) {
            return null;
        }
        for (JobState state : JobState.values()) {
            if (Html.state(state).equals(name)) {
                return state;
            }
        }
        return null;
    }

    static String given(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }

    private static String abbreviated(String text) {
        String line = text.lines().findFirst().orElse("");
        return line.length() > 120 ? line.substring(0, 119) + "…" : line;
    }

    /** A fresh redrive key per rendered form: submitting one form twice redrives once. */
    private static String redriveKey() {
        return "dashboard-" + UUID.randomUUID();
    }

    /** The notice a redirect after an action asked for: fixed texts only, nothing echoed. */
    private static String banner(PageRequest request) {
        String code = request.param("notice");
        if ("key_held".equals(code)) {
            String holder = request.param("holder");
            String link = holder != null && holder.matches("\\d{1,19}")
                    ? " <a href=\"" + esc(request.link("/jobs/" + holder)) + "\">Job " + holder + "</a> holds it."
                    : "";
            return "<div class=\"problem\">Not redriven: a newer active job holds this job's key." + link + "</div>";
        }
        String text = code == null ? null : NOTICES.get(code);
        return text == null ? "" : "<div class=\"notice\">" + esc(text) + "</div>";
    }

    private static void field(StringBuilder body, String name, String html) {
        body.append("<dt>").append(esc(name)).append("</dt><dd>").append(html).append("</dd>");
    }

    private static PageResponse noSuchJob(PageRequest request, String id) {
        return PageResponse.html(404, Html.page(request, "Job " + id, "", "<p>There is no such job.</p>"));
    }

    static PageResponse notAllowed() {
        return PageResponse.text(405, "Method not allowed: pages are read with GET, actions are POST forms.");
    }
}
