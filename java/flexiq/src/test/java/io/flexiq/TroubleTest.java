package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** An outage is logged when it starts, at most once a minute while it lasts, and when it ends. */
class TroubleTest {
    private long now;

    @Test
    void aLongOutageWarnsOnceAMinuteAndSaysWhenItEnds() {
        try (CapturedLogs logs = new CapturedLogs()) {
            Trouble trouble = new Trouble("claiming jobs", () -> now);
            // 150 s of failures, one every 100 ms.
            for (int i = 0; i < 1_500; i++) {
                trouble.failed(new StorageUnavailableException("connection refused"), "trying again in 100 ms");
                now += TimeUnit.MILLISECONDS.toNanos(100);
            }
            trouble.succeeded();
            assertEquals(1, logs.at(Level.WARN, "claiming jobs failed; trying again in 100 ms: connection refused").size());
            assertEquals(2, logs.at(Level.WARN, "claiming jobs still fails after").size());
            assertTrue(logs.at(Level.WARN, "still fails after 60 s (601 failures in a row)").size() == 1,
                    logs.matching(e -> true).toString());
            assertEquals(1, logs.at(Level.INFO, "claiming jobs works again after 1500 failures over 150000 ms").size());
            assertEquals(4, logs.matching(e -> e.getLevel().isGreaterOrEqual(Level.INFO)).size());
            // A new outage is reported from its start again.
            trouble.failed(new StorageUnavailableException("connection refused"), "trying again in 50 ms");
            assertEquals(1, logs.at(Level.WARN, "trying again in 50 ms").size());
        }
    }
}
