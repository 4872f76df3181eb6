package io.flexiq.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.JobState;
import io.flexiq.Task;
import io.flexiq.Worker;
import io.flexiq.test.FlexiQExtension;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.WebDriverWait;

/** The dashboard in a real browser: headless Chromium driven by Selenium, on a real PostgreSQL. */
@ExtendWith(FlexiQExtension.class)
class DashboardBrowserTest {
    /** Longer than a preview (a third of the key, at most 8 characters), so a leak would show. */
    static final String KEY = "invoice-2026-000417-customer-8812";

    static final String CRAWL_KEY = "invoice-2026-000418-customer-9913";
    static final String OTHER_KEY = "shipment-batch-77-eu-west-priority";

    private static final Task<String> SHIP = Task.of("ship_parcel", String.class);

    private final FlexiQ flexiq;
    private Dashboard dashboard;
    private ChromeDriver browser;

    DashboardBrowserTest(FlexiQ flexiq) {
        this.flexiq = flexiq;
    }

    @BeforeEach
    void start() {
        dashboard = Dashboard.builder(flexiq).port(0).authenticator(DashboardAuthenticator.permitAllOnLoopback()).start();
        browser = Browser.start();
    }

    @AfterEach
    void stop() {
        browser.quit();
        dashboard.close();
    }

    @Test
    void findsADeadJobByItsKeyRedrivesItAndSeesItComplete() throws Exception {
        AtomicBoolean fixed = new AtomicBoolean();
        AtomicInteger runs = new AtomicInteger();
        String id = flexiq.enqueue(SHIP, "parcel 417", EnqueueOptions.builder()
                .queue("browser").idempotencyKey(KEY).maxAttempts(1).build());
        Worker worker = flexiq.worker().queues("browser").pollInterval(Duration.ofMillis(50))
                .handle(SHIP, (parcel, job) -> {
                    runs.incrementAndGet();
                    if (!fixed.get()) {
                        throw new IllegalStateException("the carrier refused " + parcel);
                    }
                }).build().start();
        try {
            await(() -> flexiq.getJob(id).orElseThrow().state() == JobState.DEAD);
            fixed.set(true);

            // Find it by its key, as an operator with a customer's invoice number would.
            browser.get(dashboard.uri().toString());
            browser.findElement(By.name("key")).sendKeys(KEY);
            browser.findElement(By.xpath("//header//button[text()='Find']")).click();
            new WebDriverWait(browser, Duration.ofSeconds(10))
                    .until(page -> page.getTitle().equals("Job " + id + " · FlexiQ"));
            assertTrue(browser.findElement(By.tagName("dl")).getText().contains("Dead"), browser.getPageSource());
            assertTrue(browser.getPageSource().contains("the carrier refused parcel 417"), "the last error");
            browser.findElement(By.xpath("//button[text()='Redrive']")).click();

            new WebDriverWait(browser, Duration.ofSeconds(10)).until(page -> page.getPageSource().contains("Redriven:"));
            await(() -> flexiq.getJob(id).orElseThrow().state() == JobState.COMPLETED);
            browser.navigate().refresh();
            assertTrue(stateShown(browser).equals("Completed"), browser.getPageSource());
            // Both attempts, the failed one with its stack trace folded under its first line.
            List<WebElement> attempts = browser.findElements(By.xpath("//table[@class='attempts']/tbody/tr"));
            assertEquals(2, attempts.size(), browser.getPageSource());
            assertTrue(attempts.get(0).getText().contains("failed"), attempts.get(0).getText());
            assertTrue(attempts.get(1).getText().contains("completed"), attempts.get(1).getText());
            WebElement trace = attempts.get(0).findElement(By.tagName("details"));
            assertFalse(trace.findElement(By.tagName("pre")).isDisplayed(), "folded");
            trace.findElement(By.tagName("summary")).click();
            assertTrue(trace.findElement(By.tagName("pre")).getText().contains("at io.flexiq.dashboard"),
                    "the stack trace");
        } finally {
            worker.close();
        }
        assertEquals(2, runs.get(), "one failed run, one after the redrive");
    }

    @Test
    void pausesAQueueFromTheQueuesPageAndResumesIt() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        flexiq.enqueue(SHIP, "parcel 1", EnqueueOptions.builder().queue("browser-pause").build());
        Worker worker = flexiq.worker().queues("browser-pause").pollInterval(Duration.ofMillis(50))
                .handle(SHIP, (parcel, job) -> runs.incrementAndGet()).build().start();
        try {
            await(() -> runs.get() == 1);
            browser.get(dashboard.uri().toString());
            queueRow(browser, "browser-pause").findElement(By.xpath(".//button[text()='Pause']")).click();
            new WebDriverWait(browser, Duration.ofSeconds(10)).until(page -> page.getPageSource().contains("Paused:"));
            assertTrue(queueRow(browser, "browser-pause").getText().contains("Paused since"), browser.getPageSource());

            String waiting = flexiq.enqueue(SHIP, "parcel 2", EnqueueOptions.builder().queue("browser-pause").build());
            Thread.sleep(500);
            assertEquals(JobState.AVAILABLE, flexiq.getJob(waiting).orElseThrow().state(), "a paused queue's job ran");

            queueRow(browser, "browser-pause").findElement(By.xpath(".//button[text()='Resume']")).click();
            new WebDriverWait(browser, Duration.ofSeconds(10)).until(page -> page.getPageSource().contains("Resumed:"));
            await(() -> flexiq.getJob(waiting).orElseThrow().state() == JobState.COMPLETED);
            assertTrue(queueRow(browser, "browser-pause").getText().contains("Running"), browser.getPageSource());
        } finally {
            worker.close();
        }
        assertEquals(2, runs.get());
    }

    @Test
    void listsTheRunningWorkersWithWhatTheyRun() throws Exception {
        Worker worker = flexiq.worker().queues("browser-workers").concurrency(5)
                .handle(SHIP, (parcel, job) -> { }).build().start();
        try {
            await(() -> flexiq.workers().stream().anyMatch(w -> w.queues().equals(List.of("browser-workers"))));
            browser.get(dashboard.uri().toString());
            browser.findElement(By.linkText("Workers")).click();
            new WebDriverWait(browser, Duration.ofSeconds(10)).until(page -> page.getTitle().equals("Workers · FlexiQ"));
            WebElement row = browser.findElement(By.xpath("//tbody/tr[td[4][text()='browser-workers']]"));
            List<WebElement> cells = row.findElements(By.tagName("td"));
            assertEquals(Long.toString(ProcessHandle.current().pid()), cells.get(1).getText());
            assertEquals("ship_parcel", cells.get(4).getText());
            assertEquals("5", cells.get(5).getText());
            assertTrue(cells.get(9).getText().contains("s ago"), row.getText());
        } finally {
            worker.close();
        }
        browser.navigate().refresh();
        assertTrue(browser.findElements(By.xpath("//tbody/tr[td[4][text()='browser-workers']]")).isEmpty(),
                "a stopped worker is gone");
    }

    @Test
    void chartsEachQueuesCompletedAndDeadJobsPerMinuteOverAnHourOrADay() throws Exception {
        for (int i = 0; i < 4; i++) {
            flexiq.enqueue(SHIP, "fine " + i, EnqueueOptions.builder().queue("browser-charts").build());
        }
        flexiq.enqueue(SHIP, "refused", EnqueueOptions.builder().queue("browser-charts").maxAttempts(1).build());
        Worker worker = flexiq.worker().queues("browser-charts").pollInterval(Duration.ofMillis(50))
                .handle(SHIP, (parcel, job) -> {
                    if (parcel.equals("refused")) {
                        throw new IllegalStateException("refused");
                    }
                }).build().start();
        try {
            await(() -> flexiq.throughput(Duration.ofHours(1)).stream().filter(t -> t.queue().equals("browser-charts"))
                    .mapToLong(t -> t.completed() + t.dead()).sum() == 5);
        } finally {
            worker.close();
        }
        browser.get(dashboard.uri().toString());
        browser.findElement(By.linkText("Charts")).click();
        new WebDriverWait(browser, Duration.ofSeconds(10))
                .until(page -> page.getTitle().equals("Finished per minute · FlexiQ"));
        WebElement chart = browser.findElement(By.xpath("//h2[text()='browser-charts']/following-sibling::*[1]"));
        assertEquals("svg", chart.getTagName());
        assertEquals("Jobs of browser-charts per minute, last hour: 4 completed, 1 dead", chart.getAttribute("aria-label"));
        assertEquals(2, chart.findElements(By.tagName("polyline")).size(), "completed and dead");

        browser.findElement(By.linkText("Last day")).click();
        new WebDriverWait(browser, Duration.ofSeconds(10)).until(page -> page.getCurrentUrl().endsWith("window=day"));
        chart = browser.findElement(By.xpath("//h2[text()='browser-charts']/following-sibling::*[1]"));
        assertEquals("Jobs of browser-charts per minute, last day: 4 completed, 1 dead", chart.getAttribute("aria-label"));
        String points = chart.findElement(By.tagName("polyline")).getAttribute("points");
        assertEquals(24 * 60, points.split(" ").length, "a point per minute of the day");
    }

    @Test
    void redrivesEveryDeadJobOfAQueueAfterReviewingTheCountAndItsKeyRedrivesEachJobOnce() throws Exception {
        List<String> ids = new java.util.ArrayList<>();
        for (int i = 0; i < 30; i++) {
            ids.add(flexiq.enqueue(SHIP, "parcel " + i, EnqueueOptions.builder().queue("browser-bulk")
                    .maxAttempts(1).build()));
        }
        failAll(ids);
        browser.get(dashboard.uri().resolve("/jobs?state=dead&queue=browser-bulk").toString());
        new org.openqa.selenium.support.ui.Select(browser.findElement(By.name("action"))).selectByValue("redrive");
        browser.findElement(By.xpath("//button[text()='Review']")).click();
        new WebDriverWait(browser, Duration.ofSeconds(10)).until(page -> page.getTitle().equals("Bulk redrive · FlexiQ"));
        assertTrue(browser.getPageSource().contains("<strong>30 jobs</strong>"), browser.getPageSource());
        String key = browser.findElement(By.name("redriveKey")).getAttribute("value");
        browser.findElement(By.xpath("//button[text()='Redrive 30 jobs']")).click();
        new WebDriverWait(browser, Duration.ofSeconds(30)).until(page -> page.getPageSource().contains("Bulk action done"));
        assertTrue(browser.getPageSource().contains("30 of 30 selected jobs changed"), browser.getPageSource());
        for (String id : ids) {
            assertEquals(JobState.AVAILABLE, flexiq.getJob(id).orElseThrow().state());
        }
        // Dead again: the review page's key, submitted again, redrives none of them.
        failAll(ids);
        io.flexiq.JobFilter dead = io.flexiq.JobFilter.builder(JobState.DEAD).queue("browser-bulk").build();
        assertEquals(new io.flexiq.BulkResult(30, 0, 1), flexiq.redriveAll(dead, key));

        // Purge them from the same list, and cancel the pending jobs of another queue.
        bulkFromList("/jobs?state=dead&queue=browser-bulk", "purge", "Purge 30 jobs");
        assertTrue(browser.getPageSource().contains("30 of 30 selected jobs changed"), browser.getPageSource());
        assertEquals(0, flexiq.countMatching(dead));
        for (int i = 0; i < 5; i++) {
            flexiq.enqueue(SHIP, "held " + i, EnqueueOptions.builder().queue("browser-bulk-held").build());
        }
        bulkFromList("/jobs?state=available&queue=browser-bulk-held", "cancel", "Cancel 5 jobs");
        assertTrue(browser.getPageSource().contains("5 of 5 selected jobs changed"), browser.getPageSource());
        assertEquals(5, flexiq.countMatching(io.flexiq.JobFilter.builder(JobState.CANCELLED).queue("browser-bulk-held")
                .build()));
    }

    /** Chooses {@code action} under a list, reviews it and confirms with {@code button}. */
    private void bulkFromList(String list, String action, String button) {
        browser.get(dashboard.uri().resolve(list).toString());
        new org.openqa.selenium.support.ui.Select(browser.findElement(By.name("action"))).selectByValue(action);
        browser.findElement(By.xpath("//button[text()='Review']")).click();
        new WebDriverWait(browser, Duration.ofSeconds(10))
                .until(page -> page.getTitle().equals("Bulk " + action + " · FlexiQ"));
        browser.findElement(By.xpath("//button[text()='" + button + "']")).click();
        new WebDriverWait(browser, Duration.ofSeconds(30)).until(page -> page.getPageSource().contains("Bulk action done"));
    }

    /** Runs the jobs with a handler that fails them, until each is dead. */
    private void failAll(List<String> ids) throws Exception {
        Worker worker = flexiq.worker().queues("browser-bulk").pollInterval(Duration.ofMillis(50))
                .handle(SHIP, (parcel, job) -> {
                    throw new IllegalStateException("the depot is closed");
                }).build().start();
        try {
            await(() -> ids.stream().allMatch(id -> flexiq.getJob(id).orElseThrow().state() == JobState.DEAD));
        } finally {
            worker.close();
        }
    }

    @Test
    void pausesResumesAndTriggersASchedule() throws Exception {
        flexiq.schedule(io.flexiq.Schedule.builder("browser-yearly", "0 0 1 1 *", SHIP, "new year parcel")
                .options(EnqueueOptions.builder().queue("browser-schedules").build()).build());
        await(() -> flexiq.schedules().stream().anyMatch(s -> s.name().equals("browser-yearly")));
        browser.get(dashboard.uri().toString());
        browser.findElement(By.linkText("Schedules")).click();
        new WebDriverWait(browser, Duration.ofSeconds(10)).until(page -> page.getTitle().equals("Schedules · FlexiQ"));
        assertTrue(scheduleRow(browser).getText().contains("0 0 1 1 *"), scheduleRow(browser).getText());

        scheduleRow(browser).findElement(By.xpath(".//button[text()='Pause']")).click();
        new WebDriverWait(browser, Duration.ofSeconds(10)).until(page -> page.getPageSource().contains("Paused:"));
        assertTrue(flexiq.schedules().stream().filter(s -> s.name().equals("browser-yearly")).findFirst()
                .orElseThrow().pausedAt().isPresent());
        scheduleRow(browser).findElement(By.xpath(".//button[text()='Resume']")).click();
        new WebDriverWait(browser, Duration.ofSeconds(10)).until(page -> page.getPageSource().contains("Resumed:"));

        String at = scheduleRow(browser).findElement(By.name("at")).getAttribute("value");
        scheduleRow(browser).findElement(By.xpath(".//button[text()='Trigger now']")).click();
        new WebDriverWait(browser, Duration.ofSeconds(10)).until(page -> page.getPageSource().contains("Triggered:"));
        String job = browser.getTitle().replace("Job ", "").replace(" · FlexiQ", "");
        assertEquals("browser-schedules", flexiq.getJob(job).orElseThrow().queue());
        // The form's instant is the tick key's: the same form submitted again finds the same job.
        io.flexiq.EnqueueResult again = flexiq.triggerSchedule("browser-yearly", java.time.Instant.parse(at));
        assertEquals(job, again.jobId());
        assertEquals(io.flexiq.EnqueueOutcome.REPLAYED, again.outcome());
    }

    private static WebElement scheduleRow(WebDriver browser) {
        return browser.findElement(By.xpath("//tbody/tr[td[1][text()='browser-yearly']]"));
    }

    /** The queues page's row of a queue. */
    private static WebElement queueRow(WebDriver browser, String queue) {
        return browser.findElement(By.xpath("//tbody/tr[td[1][text()='" + queue + "']]"));
    }

    @Test
    void noPageShowsARawKey() throws Exception {
        String dead = flexiq.enqueue(SHIP, "parcel 1", EnqueueOptions.builder()
                .queue("crawl").idempotencyKey(CRAWL_KEY).maxAttempts(1).build());
        flexiq.enqueue(SHIP, "parcel 2", EnqueueOptions.builder().queue("crawl").uniqueKey(OTHER_KEY).build());
        flexiq.enqueue(SHIP, "parcel 3", EnqueueOptions.builder().queue("crawl").delay(Duration.ofHours(1))
                .scope("tenant-7").idempotencyKey(CRAWL_KEY).build());
        Worker worker = flexiq.worker().queues("crawl").pollInterval(Duration.ofMillis(50)).handle(SHIP, (parcel, job) -> {
            throw new IllegalStateException("no carrier for " + parcel);
        }).build().start();
        try {
            await(() -> flexiq.getJob(dead).orElseThrow().state() == JobState.DEAD);
        } finally {
            worker.close();
        }
        String digest = flexiq.getJob(dead).orElseThrow().keyDigest().orElseThrow();
        String preview = flexiq.getJob(dead).orElseThrow().keyPreview().orElseThrow();
        assertTrue(preview.length() < CRAWL_KEY.length(), preview);

        // Every page a link leads to, from the start page on.
        StringBuilder seen = new StringBuilder();
        Set<String> visited = new HashSet<>();
        Deque<String> queue = new ArrayDeque<>(List.of(dashboard.uri().toString()));
        String origin = dashboard.uri().resolve("/").toString();
        while (!queue.isEmpty() && visited.size() < 200) {
            String url = queue.poll();
            if (!visited.add(url)) {
                continue;
            }
            browser.get(url);
            String html = browser.getPageSource();
            assertRawKeysAbsent(url, html);
            seen.append(html);
            for (WebElement link : browser.findElements(By.cssSelector("a[href]"))) {
                String target = link.getDomProperty("href").replaceFirst("#.*", "");
                if (target.startsWith(origin) && !visited.contains(target)) {
                    queue.add(target);
                }
            }
        }
        assertTrue(visited.contains(dashboard.uri().resolve("/jobs/" + dead).toString()), "the crawl reached the job: "
                + visited);
        assertTrue(seen.indexOf(preview) >= 0, "the preview is shown");
        assertTrue(seen.indexOf(digest) >= 0, "the digest is shown");

        // The search's answers: a job found, and a key no job holds.
        Map<String, String> answers = Map.of(CRAWL_KEY, "Job " + dead, CRAWL_KEY + "-unknown", "Find by key");
        for (Map.Entry<String, String> search : answers.entrySet()) {
            browser.get(dashboard.uri().toString());
            browser.findElement(By.name("key")).sendKeys(search.getKey());
            browser.findElement(By.xpath("//header//button[text()='Find']")).click();
            new WebDriverWait(browser, Duration.ofSeconds(10))
                    .until(page -> page.getTitle().equals(search.getValue() + " · FlexiQ"));
            assertRawKeysAbsent("the search's answer", browser.getPageSource());
        }
    }

    private static void assertRawKeysAbsent(String where, String html) {
        for (String key : List.of(KEY, CRAWL_KEY, OTHER_KEY)) {
            assertFalse(html.contains(key), "a raw key on " + where + ":\n" + html);
        }
    }

    private static String stateShown(WebDriver page) {
        return page.findElement(By.xpath("//dt[text()='State']/following-sibling::dd[1]")).getText();
    }

    private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out");
            }
            Thread.sleep(20);
        }
    }
}
