package io.flexiq.dashboard;

import java.io.File;
import java.time.Duration;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Headless Chromium driven through ChromeDriver, both from the machine's packages (Debian's
 * {@code chromium} and {@code chromium-driver}, which {@code .ci/run} installs); FLEXIQ_CHROMIUM
 * and FLEXIQ_CHROMEDRIVER name others.
 */
final class Browser {
    private Browser() {}

    static ChromeDriver start() {
        String chromium = System.getenv().getOrDefault("FLEXIQ_CHROMIUM", "/usr/bin/chromium");
        String driver = System.getenv().getOrDefault("FLEXIQ_CHROMEDRIVER", "/usr/bin/chromedriver");
        if (!new File(chromium).canExecute() || !new File(driver).canExecute()) {
            throw new IllegalStateException("the browser tests need Chromium at " + chromium + " and ChromeDriver at "
                    + driver + ": apt-get install chromium chromium-driver (or set FLEXIQ_CHROMIUM and "
                    + "FLEXIQ_CHROMEDRIVER)");
        }
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium);
        // --no-sandbox: the tests may run as root, where Chromium's sandbox refuses to start.
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900");
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File(driver))
                .usingAnyFreePort()
                .build();
        ChromeDriver browser = new ChromeDriver(service, options);
        browser.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
        return browser;
    }
}
