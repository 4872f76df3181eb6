package io.flexiq.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.JobState;
import io.flexiq.Task;
import io.flexiq.Worker;
import io.flexiq.test.FlexiQExtension;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.WebDriverWait;

/** The dashboard in a real browser: headless Chromium driven by Selenium, on a real PostgreSQL. */
@ExtendWith(FlexiQExtension.class)
class DashboardBrowserTest {
    /** Longer than a preview (a third of the key, at most 8 characters), so a leak would show. */
    static final String KEY = "invoice-2026-000417-customer-8812";

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
    void redrivesADeadJobThatThenCompletes() throws Exception {
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

            browser.get(dashboard.uri().resolve("/jobs/" + id).toString());
            assertTrue(browser.findElement(By.tagName("dl")).getText().contains("Dead"), browser.getPageSource());
            assertTrue(browser.getPageSource().contains("the carrier refused parcel 417"), "the last error");
            browser.findElement(By.xpath("//button[text()='Redrive']")).click();

            new WebDriverWait(browser, Duration.ofSeconds(10)).until(page -> page.getPageSource().contains("Redriven:"));
            await(() -> flexiq.getJob(id).orElseThrow().state() == JobState.COMPLETED);
            browser.navigate().refresh();
            assertTrue(stateShown(browser).equals("Completed"), browser.getPageSource());
        } finally {
            worker.close();
        }
        assertEquals(2, runs.get(), "one failed run, one after the redrive");
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
