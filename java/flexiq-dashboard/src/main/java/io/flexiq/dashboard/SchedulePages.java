package io.flexiq.dashboard;

import static io.flexiq.dashboard.Html.esc;

import io.flexiq.DeclaredSchedule;
import io.flexiq.EnqueueOutcome;
import io.flexiq.EnqueueResult;
import io.flexiq.FlexiQ;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.List;

/**
 * The schedules page: every declared schedule with its expression, zone, last and next tick, the
 * job of its last tick, and buttons that pause or resume it and trigger it now. A trigger form
 * carries the instant the page was rendered, whose tick key the job is enqueued under: the same
 * form submitted twice enqueues once.
 */
final class SchedulePages {
    private final FlexiQ flexiq;

    SchedulePages(FlexiQ flexiq) {
        this.flexiq = flexiq;
    }

    PageResponse list(PageRequest request) {
        List<DeclaredSchedule> schedules = flexiq.schedules();
        StringBuilder body = new StringBuilder();
        if (schedules.isEmpty()) {
            body.append("<p class=\"muted\">No schedule is declared.</p>");
        } else {
            String at = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
            body.append("<table><thead><tr><th>Schedule</th><th>Cron</th><th>Zone</th><th>Task</th><th>Queue</th>")
                    .append("<th>Last tick</th><th>Its job</th><th>Next tick</th><th>Status</th><th></th></tr></thead><tbody>");
            for (DeclaredSchedule s : schedules) {
                String name = "<input type=\"hidden\" name=\"name\" value=\"" + esc(s.name()) + "\">";
                body.append("<tr><td>").append(esc(s.name())).append("</td><td><code>").append(esc(s.cron()))
                        .append("</code></td><td>").append(esc(s.zone().getId())).append("</td><td>")
                        .append(esc(s.task())).append("</td><td>").append(esc(s.queue())).append("</td><td>")
                        .append(Html.time(s.lastTick().orElse(null))).append("</td><td>")
                        .append(s.lastTickJobId().map(id -> "<a href=\"" + esc(request.link("/jobs/" + id)) + "\">Job "
                                + esc(id) + "</a>").orElse("")).append("</td><td>").append(Html.time(s.nextTick()))
                        .append("</td><td>").append(s.pausedAt().map(p -> "<span class=\"dead\">Paused</span>"
                                + " <span class=\"muted\">since " + Html.time(p) + "</span>").orElse("Running"))
                        .append("</td><td>").append(s.pausedAt().isPresent()
                                ? Html.form(request, "/schedules/resume", name, "Resume")
                                : Html.form(request, "/schedules/pause", name, "Pause"));
                if (s.triggerable()) {
                    body.append(Html.form(request, "/schedules/trigger", name + "<input type=\"hidden\" name=\"at\""
                            + " value=\"" + at + "\">", "Trigger now"));
                }
                body.append("</td></tr>");
            }
            body.append("</tbody></table>");
        }
        body.append("<p class=\"muted\">Each declaring process renews its schedule before every tick; a paused")
                .append(" schedule's ticks are not enqueued, nor made up once it is resumed.</p>");
        return PageResponse.html(200, Html.page(request, "Schedules", banner(request), body.toString()));
    }

    /** Pauses, resumes or triggers the schedule a form names. */
    PageResponse act(PageRequest request, String action) {
        String name = Pages.given(request.param("name"));
        if (name == null) {
            throw new IllegalArgumentException("the form names no schedule: go back and use a schedule's button");
        }
        switch (action) {
            case "pause" -> {
                return back(request, flexiq.pauseSchedule(name) ? "paused" : "unchanged");
            }
            case "resume" -> {
                return back(request, flexiq.resumeSchedule(name) ? "resumed" : "unchanged");
            }
            default -> {
                Instant at;
                try {
                    at = Instant.parse(String.valueOf(request.param("at")));
                } catch (DateTimeParseException e) {
                    throw new IllegalArgumentException("a trigger needs the instant its page was shown at: go back and"
                            + " use the schedule's button");
                }
                EnqueueResult job = flexiq.triggerSchedule(name, at);
                return PageResponse.seeOther(request.link("/jobs/" + job.jobId() + "?notice="
                        + (job.outcome() == EnqueueOutcome.ACCEPTED ? "triggered" : "trigger_replayed")));
            }
        }
    }

    private static PageResponse back(PageRequest request, String notice) {
        return PageResponse.seeOther(request.link("/schedules?notice=schedule_" + notice));
    }

    private static String banner(PageRequest request) {
        String text = switch (String.valueOf(request.param("notice"))) {
            case "schedule_paused" -> "Paused: no process enqueues its ticks until it is resumed.";
            case "schedule_resumed" -> "Resumed: its next tick is enqueued.";
            case "schedule_unchanged" -> "Nothing changed: the schedule was already so.";
            default -> null;
        };
        return text == null ? "" : "<div class=\"notice\">" + esc(text) + "</div>";
    }
}
