package io.flexiq.internal.observability;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import io.flexiq.CapturedLogs;
import io.flexiq.StorageException;
import io.flexiq.StorageUnavailableException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * An outage is logged once for all of a client's activities: when it starts, at most once a
 * minute while it lasts, and when it ends. Other failures are logged per activity.
 */
class TroubleTest {
    private long now;

    private static StorageUnavailableException unavailable() {
        return new StorageUnavailableException("connection refused");
    }

    @Test
    void aLongOutageSeenByEveryActivityWarnsOnceAMinuteAndSaysWhenItEnds() {
        try (CapturedLogs logs = new CapturedLogs()) {
            Trouble outage = Trouble.outage(() -> now);
            Trouble claiming = outage.activity("claiming jobs");
            Trouble leases = outage.activity("extending the leases of running jobs");
            // 150 s of failures, each activity failing every 100 ms.
            for (int i = 0; i < 1_500; i++) {
                claiming.failed(unavailable(), "trying again in 100 ms");
                leases.failed(unavailable(), "trying again in 100 ms");
                now += TimeUnit.MILLISECONDS.toNanos(100);
            }
            // A success while failures go on elsewhere does not end the outage.
            leases.succeeded();
            claiming.failed(unavailable(), "trying again in 100 ms");
            now += TimeUnit.MILLISECONDS.toNanos(Trouble.SETTLE_MILLIS);
            claiming.succeeded();
            assertEquals(1, logs.matching(e -> e.getFormattedMessage().startsWith("claiming jobs failed; trying again in"
                    + " 100 ms: connection refused")).size());
            assertEquals(2, logs.at(Level.WARN, "reaching PostgreSQL still fails after").size());
            assertEquals(1, logs.at(Level.WARN, "reaching PostgreSQL still fails after 60 s (1201 failures in a row);"
                    + " claiming jobs failed").size(), logs.matching(e -> true).toString());
            assertEquals(1, logs.at(Level.INFO, "reaching PostgreSQL works again after 3001 failures over 150000 ms").size(),
                    logs.matching(e -> true).toString());
            assertEquals(4, logs.matching(e -> e.getLevel().isGreaterOrEqual(Level.INFO)).size());
            // A new outage is reported from its start again.
            leases.failed(unavailable(), "trying again in 50 ms");
            assertEquals(1, logs.at(Level.WARN, "extending the leases of running jobs failed; trying again in 50 ms").size());
        }
    }

    @Test
    void otherFailuresAreAnActivitysOwn() {
        try (CapturedLogs logs = new CapturedLogs()) {
            Trouble outage = Trouble.outage(() -> now);
            Trouble claiming = outage.activity("claiming jobs");
            Trouble recording = outage.activity("recording the outcomes of attempts");
            claiming.failed(new StorageException("permission denied for table jobs"), "trying again in 1000 ms");
            claiming.failed(new StorageException("permission denied for table jobs"), "trying again in 1000 ms");
            recording.failed(new StorageException("disk full"), "trying again in 50 ms");
            assertEquals(1, logs.at(Level.WARN, "claiming jobs failed; trying again in 1000 ms: permission denied").size());
            assertEquals(1, logs.at(Level.WARN, "recording the outcomes of attempts failed; trying again in 50 ms: disk"
                    + " full").size());
            now += TimeUnit.MILLISECONDS.toNanos(Trouble.SETTLE_MILLIS);
            claiming.succeeded();
            assertEquals(1, logs.at(Level.INFO, "claiming jobs works again after 2 failures").size());
            assertEquals(0, logs.at(Level.INFO, "reaching PostgreSQL").size());
        }
    }
}
