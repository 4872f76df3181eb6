package io.flexiq.dashboard;

import static io.flexiq.dashboard.Html.esc;

import io.flexiq.FlexiQ;
import io.flexiq.JobCount;
import io.flexiq.JobInfo;
import io.flexiq.JobState;
import io.flexiq.RedriveResult;
import io.flexiq.StorageUnavailableException;
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
    private static final Map<String, String> NOTICES = Map.of(
            "redriven", "Redriven: the job is due again, its attempts starting over.",
            "replayed", "This redrive key already redrove this job: nothing changed.",
            "not_dead", "Not redriven: the job is not dead-lettered.",
            "cancelled", "Cancelled.",
            "not_cancelled", "Not cancelled: only a pending job can be cancelled.",
            "not_purged", "Not purged: a running job cannot be purged.",
            "purged", "Purged: the job is deleted, and its key with it.");

    private static final System.Logger LOG = System.getLogger(Pages.class.getName());

    private final FlexiQ flexiq;
    private final PayloadRedactor redactor;

    Pages(FlexiQ flexiq, PayloadRedactor redactor) {
        this.flexiq = Objects.requireNonNull(flexiq, "flexiq");
        this.redactor = Objects.requireNonNull(redactor, "redactor");
    }

    /** The page or action's answer; a failure of FlexiQ becomes an error page, logged. */
    PageResponse handle(PageRequest request) {
        try {
            return route(request);
        } catch (StorageUnavailableException e) {
            LOG.log(System.Logger.Level.WARNING, "a dashboard page failed: {0}", e.getMessage());
            return PageResponse.html(503, Html.page(request, "Database unavailable", "",
                    "<p class=\"problem\">" + esc(e.getMessage()) + "</p>"));
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "a dashboard page failed", e);
            return PageResponse.html(500, Html.page(request, "Error", "",
                    "<p class=\"problem\">The page failed: " + esc(e.getMessage()) + "</p>"));
        }
    }

    private PageResponse route(PageRequest request) {
        String path = request.path();
        Matcher action = ACTION.matcher(path);
        if (action.matches()) {
            return request.isPost() ? act(request, action.group(1), action.group(2)) : notAllowed();
        }
        if (request.isPost()) {
            return notAllowed();
        }
        if (path.equals("/") || path.isEmpty()) {
            return queues(request);
        }
        Matcher job = JOB.matcher(path);
        if (job.matches()) {
            return job(request, job.group(1));
        }
        return PageResponse.html(404, Html.page(request, "Not found", "", "<p>No such page.</p>"));
    }

    private PageResponse queues(PageRequest request) {
        Map<String, Map<JobState, Long>> byQueue = new TreeMap<>();
        for (JobCount count : flexiq.countJobs()) {
            byQueue.computeIfAbsent(count.queue(), q -> new TreeMap<>()).merge(count.state(), count.count(), Long::sum);
        }
        StringBuilder body = new StringBuilder("<table><thead><tr><th>Queue</th>");
        for (JobState state : JobState.values()) {
            body.append("<th>").append(Html.capitalized(state)).append("</th>");
        }
        body.append("</tr></thead><tbody>");
        byQueue.forEach((queue, counts) -> {
            body.append("<tr><td>").append(esc(queue)).append("</td>");
            for (JobState state : JobState.values()) {
                long count = counts.getOrDefault(state, 0L);
                body.append("<td class=\"n\"><a href=\"")
                        .append(esc(request.link("/jobs?state=" + Html.state(state) + "&queue=" + Html.query(queue))))
                        .append("\">").append(count).append("</a></td>");
            }
            body.append("</tr>");
        });
        body.append("</tbody></table>");
        if (byQueue.isEmpty()) {
            body.append("<p class=\"muted\">No jobs yet.</p>");
        }
        return PageResponse.html(200, Html.page(request, "Queues", "", body.toString()));
    }

    private PageResponse job(PageRequest request, String id) {
        Optional<JobInfo> found = flexiq.getJob(id);
        if (found.isEmpty()) {
            return PageResponse.html(404, Html.page(request, "Job " + id, "", "<p>There is no such job.</p>"));
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
        job.lastError().ifPresent(error -> body.append("<h2>Last error</h2><pre>").append(esc(error)).append("</pre>"));
        body.append(actions(request, job));
        return PageResponse.html(200, Html.page(request, "Job " + job.id(), banner(request), body.toString()));
    }

    /** The buttons for what this job's state allows. */
    private static String actions(PageRequest request, JobInfo job) {
        StringBuilder out = new StringBuilder("<div class=\"actions\">");
        String base = "/jobs/" + job.id();
        if (job.state() == JobState.DEAD) {
            // A fresh key per rendered form: submitting the same form twice redrives once.
            out.append(Html.form(request, base + "/redrive", "<input name=\"redriveKey\" value=\""
                    + esc("dashboard-" + UUID.randomUUID()) + "\" size=\"44\" aria-label=\"Redrive key\">", "Redrive"));
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
                RedriveResult result;
                try {
                    result = flexiq.redrive(id, key);
                } catch (IllegalArgumentException refused) {
                    return PageResponse.html(400, Html.page(request, "Job " + id, "",
                            "<p class=\"problem\">" + esc(refused.getMessage()) + "</p>"));
                }
                switch (result.outcome()) {
                    case NOT_FOUND -> {
                        return PageResponse.html(404, Html.page(request, "Job " + id, "", "<p>There is no such job.</p>"));
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

    static PageResponse notAllowed() {
        return PageResponse.text(405, "Method not allowed: pages are read with GET, actions are POST forms.");
    }
}
