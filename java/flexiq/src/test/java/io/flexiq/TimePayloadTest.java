package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The default serializer with java.time values and Optionals, through PostgreSQL and a worker;
 * a caller's mapper that would write them as numbers is refused, naming the feature to disable.
 */
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

    /** Start times of a rota, for the JSON path of a value in an array. */
    public record Rota(List<Instant> starts) {}

    /** A plain Jackson mapper with the java.time module: it writes dates and durations as numbers. */
    private static ObjectMapper plainMapper() {
        return JsonMapper.builder().addModule(new JavaTimeModule()).addModule(new Jdk8Module()).build();
    }

    @Test
    void aMapperWritingDatesAsTimestampsIsRefusedNamingTheFeatureAndTheFix() {
        CanonicalJsonSerializer serializer = new CanonicalJsonSerializer(plainMapper());
        PayloadSerializationException e = assertThrows(PayloadSerializationException.class,
                () -> serializer.serialize(BOOKING));
        assertEquals("payload of type io.flexiq.TimePayloadTest$Booking does not serialize to JSON: the "
                + "java.time.Instant at $.at would be written as the number 1796080450.123456789, as this "
                + "ObjectMapper's SerializationFeature.WRITE_DATES_AS_TIMESTAMPS asks (on in a plain ObjectMapper); "
                + "canonical JSON's doubles hold a number of seconds to the nanosecond only for some values, so "
                + "such payloads pass or fail by the clock's chance: call "
                + "mapper.disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS) to write java.time values as "
                + "ISO-8601 strings, exact to the nanosecond, as FlexiQ's default serializer does", e.getMessage());
        // The JSON an enqueue hands to the native core is refused the same way, before any call.
        assertThrows(PayloadSerializationException.class, () -> serializer.jsonForNativeCanonicalForm(BOOKING));

        // Whole seconds, which a double holds, are refused too: the outcome does not hang on the clock.
        Rota rota = new Rota(List.of(Instant.ofEpochSecond(1_796_080_450L), Instant.ofEpochSecond(1_796_084_050L)));
        PayloadSerializationException whole = assertThrows(PayloadSerializationException.class,
                () -> serializer.serialize(rota));
        assertTrue(whole.getMessage().contains("the java.time.Instant at $.starts[0] would be written as the number "
                + "1796080450.000000000"), whole.getMessage());
    }

    @Test
    void aMapperWritingDurationsAsTimestampsIsRefusedNamingItsFeature() {
        ObjectMapper durationsAsNumbers = plainMapper().disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);
        PayloadSerializationException e = assertThrows(PayloadSerializationException.class,
                () -> new CanonicalJsonSerializer(durationsAsNumbers).serialize(BOOKING));
        assertTrue(e.getMessage().contains("the java.time.Duration at $.length would be written as the number "
                + "1.000000001, as this ObjectMapper's SerializationFeature.WRITE_DURATIONS_AS_TIMESTAMPS asks"),
                e.getMessage());
        assertTrue(e.getMessage().contains("call mapper.disable(SerializationFeature.WRITE_DURATIONS_AS_TIMESTAMPS)"),
                e.getMessage());
    }

    @Test
    void theFixWritesWhatTheDefaultSerializerWrites() {
        ObjectMapper fixed = plainMapper().disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
                .disable(SerializationFeature.WRITE_DURATIONS_AS_TIMESTAMPS)
                .disable(DeserializationFeature.ADJUST_DATES_TO_CONTEXT_TIME_ZONE);
        CanonicalJsonSerializer serializer = new CanonicalJsonSerializer(fixed);
        assertArrayEquals(new CanonicalJsonSerializer().serialize(BOOKING), serializer.serialize(BOOKING));
        assertEquals(BOOKING, serializer.deserialize(serializer.serialize(BOOKING), Booking.class));
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
