package io.flexiq.dashboard;

import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.Task;
import io.flexiq.Worker;
import io.flexiq.test.PostgresServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;

/**
 * Takes the screenshots in docs/dashboard.md of the dashboard's main pages, over sample jobs on a
 * throwaway PostgreSQL: {@code gradle -q :flexiq-dashboard:screenshots} writes them to
 * docs/screenshots.
 * Never part of the library's jar.
 */
final class Screenshots {
    record Email(String to) {}

    record Charge(String customer, long cents) {}

    private static final Task<Email> EMAIL = Task.of("send_email", Email.class);
    private static final Task<Charge> CHARGE = Task.of("charge_card", Charge.class);
    private static final Task<String> REPORT = Task.of("build_report", String.class);

    private Screenshots() {}

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        try (PostgresServer server = PostgresServer.builder().durable(false).start();
                FlexiQ flexiq = FlexiQ.builder(server.url()).migrate(true).build();
                Dashboard dashboard = Dashboard.builder(flexiq).port(0)
                        .authenticator(DashboardAuthenticator.permitAllOnLoopback()).start()) {
            String dead = sampleJobs(flexiq);
            // The reports queue paused, its worker running: the queues page shows the pause, the
            // workers page the worker, and the due reports wait.
            flexiq.pauseQueue("reports");
            flexiq.schedule(io.flexiq.Schedule.builder("nightly-report", "0 2 * * *", REPORT, "nightly")
                    .zone(java.time.ZoneId.of("Europe/Berlin")).options(EnqueueOptions.builder().queue("reports").build())
                    .build());
            Worker reports = flexiq.worker().queues("reports").concurrency(4)
                    .handle(REPORT, (report, job) -> { }).build().start();
            ChromeDriver browser = Browser.start();
            try {
                shoot(browser, dashboard, "/", out.resolve("queues.png"));
                shoot(browser, dashboard, "/jobs?state=dead", out.resolve("dead-letters.png"));
                shoot(browser, dashboard, "/jobs/" + dead, out.resolve("job.png"));
                shoot(browser, dashboard, "/jobs?state=available", out.resolve("jobs.png"));
                shoot(browser, dashboard, "/charts", out.resolve("charts.png"));
                shoot(browser, dashboard, "/workers", out.resolve("workers.png"));
                shoot(browser, dashboard, "/schedules", out.resolve("schedules.png"));
            } finally {
                browser.quit();
                reports.close();
            }
        }
    }

    /**
     * Jobs in every state a screenshot shows, enqueued over five minutes so that the sparklines
     * have a shape; returns a dead-lettered job's id.
     */
    private static String sampleJobs(FlexiQ flexiq) throws InterruptedException {
        for (int i = 1; i <= 6; i++) {
            flexiq.enqueue(REPORT, "monthly-" + i, EnqueueOptions.builder().queue("reports")
                    .uniqueKey("report-2026-11-region-" + i).delay(Duration.ofHours(i)).build());
            flexiq.enqueue(REPORT, "daily-" + i, EnqueueOptions.builder().queue("reports").build());
        }
        Worker worker = flexiq.worker().queues("emails", "billing").pollInterval(Duration.ofMillis(50))
                .handle(EMAIL, (email, job) -> Thread.sleep(20))
                .handle(CHARGE, (charge, job) -> {
                    if (job.maxAttempts() == 1) {
                        throw new IllegalStateException("card declined for " + charge.customer()
                                + ": insufficient funds (gateway code 51)");
                    }
                }).build().start();
        String dead = null;
        try {
            int[] emails = {12, 30, 18, 40, 25};
            int user = 1000;
            int order = 7000;
            for (int minute = 0; minute < emails.length; minute++) {
                for (int i = 0; i < emails[minute]; i++) {
                    user++;
                    flexiq.enqueue(EMAIL, new Email("user" + user + "@example.com"), EnqueueOptions.builder()
                            .queue("emails").idempotencyKey("welcome-email-for-user-" + user).build());
                }
                for (int i = 0; i < 3 + minute; i++) {
                    order++;
                    boolean declined = order % 5 == 0;
                    String id = flexiq.enqueue(CHARGE, new Charge("cus_" + (order - 2800), 1999L * (i + 1)),
                            EnqueueOptions.builder().queue("billing").idempotencyKey("order-2026-11-" + order + "-charge")
                                    .maxAttempts(declined ? 1 : 3).build());
                    dead = declined ? id : dead;
                }
                if (minute < emails.length - 1) {
                    Thread.sleep(60_000);
                }
            }
            long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (flexiq.countJobs().stream().anyMatch(c -> !c.queue().equals("reports") && c.state().isActive())) {
                if (System.nanoTime() > end) {
                    throw new IllegalStateException("the sample jobs did not settle within a minute");
                }
                Thread.sleep(100);
            }
        } finally {
            worker.close();
        }
        return dead;
    }

    private static void shoot(ChromeDriver browser, Dashboard dashboard, String path, Path file) throws Exception {
        browser.get(dashboard.uri().resolve(path).toString());
        Files.write(file, browser.getScreenshotAs(OutputType.BYTES));
        System.out.println("wrote " + file);
    }
}
