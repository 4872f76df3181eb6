package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The default serializer with java.time values and Optionals, through PostgreSQL and a worker. */
class TimePayloadTest {
    /** A payload with every kind of value the default serializer must keep exactly. */
    public record Booking(Instant at, LocalDate day, OffsetDateTime local, Optional<String> note,
            Optional<String> none, Duration length) {}

    static final Task<Booking> BOOK = Task.of("book_room", Booking.class).idempotent(true);

    static final Booking BOOKING = new Booking(Instant.parse("2026-11-30T23:14:10.123456789Z"),
            LocalDate.of(2026, 2, 28), OffsetDateTime.of(2026, 11, 30, 8, 0, 0, 1, ZoneOffset.ofHours(-5)),
            Optional.of("late arrival"), Optional.empty(), Duration.ofNanos(1_000_000_001L));

    @Test
    void writesIsoStringsExactToTheNanosecondInCanonicalForm() {
        String json = new String(new CanonicalJsonSerializer().serialize(BOOKING), StandardCharsets.UTF_8);
        assertEquals("{\"at\":\"2026-11-30T23:14:10.123456789Z\",\"day\":\"2026-02-28\","
                + "\"length\":\"PT1.000000001S\",\"local\":\"2026-11-30T08:00:00.000000001-05:00\","
                + "\"none\":null,\"note\":\"late arrival\"}", json);
    }

    @Test
    void handsTheNativeCoreJsonThatIsCanonicalAlready() {
        // Declared out of order: written sorted, the core finds it canonical and keeps it as is.
        CanonicalJsonSerializer serializer = new CanonicalJsonSerializer();
        assertEquals(new String(serializer.serialize(BOOKING), StandardCharsets.UTF_8),
                new String(serializer.jsonForNativeCanonicalForm(BOOKING), StandardCharsets.UTF_8));
    }

    @Test
    void aBookingRoundTripsExactlyThroughAWorkerAndKeepsItsDerivedKey() throws Exception {
        BlockingQueue<Booking> handled = new ArrayBlockingQueue<>(1);
        try (FlexiQ queue = TestDatabase.client()) {
            EnqueueResult first = queue.enqueueWithResult(BOOK, BOOKING);
            // An equal booking built anew derives the same key: a replay.
            Booking again = new Booking(Instant.ofEpochSecond(BOOKING.at().getEpochSecond(), 123_456_789),
                    LocalDate.parse("2026-02-28"), OffsetDateTime.parse("2026-11-30T08:00:00.000000001-05:00"),
                    Optional.of("late arrival"), Optional.empty(), Duration.parse("PT1.000000001S"));
            EnqueueResult second = queue.enqueueWithResult(BOOK, again);
            assertEquals(EnqueueOutcome.REPLAYED, second.outcome());
            assertEquals(first.jobId(), second.jobId());
            Worker worker = queue.worker().handle(BOOK, (b, job) -> handled.add(b)).build().start();
            Booking got = handled.poll(30, TimeUnit.SECONDS);
            worker.close();
            assertEquals(BOOKING, got);
            assertEquals(ZoneOffset.ofHours(-5), got.local().getOffset());
            assertTrue(queue.getJob(first.jobId()).orElseThrow().keyDigest().isPresent());
        }
    }
}
