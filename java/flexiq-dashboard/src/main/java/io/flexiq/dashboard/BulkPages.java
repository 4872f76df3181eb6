package io.flexiq.dashboard;

import static io.flexiq.dashboard.Html.esc;

import io.flexiq.BulkResult;
import io.flexiq.FlexiQ;
import io.flexiq.JobFilter;
import io.flexiq.JobState;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/**
 * Bulk actions on the jobs a list shows: a form under the list, a review page that counts the
 * jobs the filter selects before anything changes (GET), and the action itself (POST, with the
 * CSRF token), answered by a redirect back to the list with what it did. A redrive's review page
 * carries a fresh redrive key, so submitting it twice redrives each job once.
 */
final class BulkPages {
    private final FlexiQ flexiq;

    BulkPages(FlexiQ flexiq) {
        this.flexiq = flexiq;
    }

    /** The form under a list of jobs in {@code state} (none for running jobs). */
    static String form(PageRequest request, JobState state, String queue, String task) {
        List<String> actions = actions(state);
        if (actions.isEmpty()) {
            return "";
        }
        StringBuilder out = new StringBuilder("<h2>Bulk action</h2><form method=\"get\" action=\"")
                .append(esc(request.link("/bulk"))).append("\" class=\"filters\">")
                .append(hidden("state", Html.state(state))).append(hidden("queue", queue)).append(hidden("task", task))
                .append("<select name=\"action\" aria-label=\"Action\">");
        for (String action : actions) {
            out.append("<option value=\"").append(action).append("\">").append(Html.capitalized(action))
                    .append("</option>");
        }
        return out.append("</select> every ").append(esc(Html.state(state))).append(" job")
                .append(queue == null ? "" : " of queue " + esc(queue)).append(task == null ? "" : ", task " + esc(task))
                .append(" created from <input name=\"from\" placeholder=\"2026-12-07T10:00:00Z\" size=\"22\"")
                .append(" aria-label=\"Created from\"> before <input name=\"before\" placeholder=\"(now)\" size=\"22\"")
                .append(" aria-label=\"Created before\"> <button type=\"submit\">Review</button></form>").toString();
    }

    /** The review: how many jobs the action would take, and the button that takes them. */
    PageResponse review(PageRequest request) {
        Bulk bulk = Bulk.of(request);
        long count = flexiq.countMatching(bulk.filter);
        StringBuilder body = new StringBuilder("<p>").append(esc(bulk.describe())).append(": <strong>")
                .append(String.format(Locale.ROOT, "%,d", count)).append(count == 1 ? " job" : " jobs")
                .append("</strong> now.</p>");
        if (count == 0) {
            body.append("<p class=\"muted\">Nothing to do.</p>");
        } else {
            String fields = hidden("action", bulk.action) + hidden("state", Html.state(bulk.filter.state()))
                    + hidden("queue", bulk.filter.queue().orElse(null)) + hidden("task", bulk.filter.task().orElse(null))
                    + hidden("from", bulk.filter.createdFrom().map(Instant::toString).orElse(null))
                    + hidden("before", bulk.filter.createdBefore().map(Instant::toString).orElse(null))
                    + (bulk.action.equals("redrive") ? hidden("redriveKey", "dashboard-bulk-" + UUID.randomUUID()) : "");
            body.append("<p>It runs in batches, each a short transaction; jobs that move on meanwhile are left.</p>")
                    .append("<div class=\"actions\">").append(Html.form(request, "/bulk", fields,
                            Html.capitalized(bulk.action) + String.format(Locale.ROOT, " %,d jobs", count)))
                    .append("</div>");
        }
        return PageResponse.html(200, Html.page(request, "Bulk " + bulk.action, "", body.toString()));
    }

    /** Runs the action, then back to the list with what it did. */
    PageResponse run(PageRequest request) {
        Bulk bulk = Bulk.of(request);
        BulkResult result = switch (bulk.action) {
            case "cancel" -> flexiq.cancelAll(bulk.filter);
            case "purge" -> flexiq.purgeAll(bulk.filter);
            default -> {
                String key = request.param("redriveKey");
                if (key == null || key.isBlank()) {
                    throw new IllegalArgumentException("a bulk redrive needs its redrive key: go back to the review page");
                }
                yield flexiq.redriveAll(bulk.filter, key);
            }
        };
        StringBuilder back = new StringBuilder("/jobs?state=").append(Html.state(bulk.filter.state()));
        bulk.filter.queue().ifPresent(q -> back.append("&queue=").append(Html.query(q)));
        bulk.filter.task().ifPresent(t -> back.append("&task=").append(Html.query(t)));
        back.append("&notice=bulk&changed=").append(result.changed()).append("&selected=").append(result.selected());
        return PageResponse.seeOther(request.link(back.toString()));
    }

    /** The banner after a bulk action: its numbers only, nothing else echoed. */
    static String banner(PageRequest request) {
        String changed = request.param("changed");
        String selected = request.param("selected");
        if (changed == null || selected == null || !changed.matches("\\d{1,19}") || !selected.matches("\\d{1,19}")) {
            return "";
        }
        return "<div class=\"notice\">Bulk action done: " + changed + " of " + selected
                + " selected jobs changed (the others had moved on, or this redrive had redriven them already).</div>";
    }

    private static List<String> actions(JobState state) {
        List<String> actions = new ArrayList<>();
        if (state == JobState.DEAD) {
            actions.add("redrive");
        }
        if (state.isActive() && state != JobState.RUNNING) {
            actions.add("cancel");
        }
        if (state != JobState.RUNNING) {
            actions.add("purge");
        }
        return actions;
    }

    private static String hidden(String name, String value) {
        return value == null ? "" : "<input type=\"hidden\" name=\"" + name + "\" value=\"" + esc(value) + "\">";
    }

    /** A bulk action as a request names it; a value that is none refuses the request. */
    private record Bulk(String action, JobFilter filter) {
        static Bulk of(PageRequest request) {
            String action = request.param("action");
            JobState state = Pages.state(request.param("state"));
            if (state == null || action == null || !actions(state).contains(action)) {
                throw new IllegalArgumentException("a bulk action needs a state and an action that applies to it"
                        + " (redrive: dead jobs; cancel: pending jobs; purge: any but running); start from a list of"
                        + " jobs in one state");
            }
            JobFilter.Builder filter = JobFilter.builder(state);
            String queue = Pages.given(request.param("queue"));
            String task = Pages.given(request.param("task"));
            if (queue != null) {
                filter.queue(queue);
            }
            if (task != null) {
                filter.task(task);
            }
            Instant from = instant(request.param("from"), "from");
            Instant before = instant(request.param("before"), "before");
            if (from != null) {
                filter.createdFrom(from);
            }
            if (before != null) {
                filter.createdBefore(before);
            }
            return new Bulk(action, filter.build());
        }

        private static Instant instant(String text, String what) {
            String given = Pages.given(text);
            if (given == null) {
                return null;
            }
            try {
                return Instant.parse(given);
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("created " + what + " must be an instant such as"
                        + " 2026-12-07T10:00:00Z, in UTC");
            }
        }

        String describe() {
            return Html.capitalized(action) + " every " + Html.state(filter.state()) + " job"
                    + filter.queue().map(q -> " of queue " + q).orElse("")
                    + filter.task().map(t -> ", task " + t).orElse("")
                    + filter.createdFrom().map(f -> ", created from " + f).orElse("")
                    + filter.createdBefore().map(b -> ", created before " + b).orElse("");
        }
    }
}
