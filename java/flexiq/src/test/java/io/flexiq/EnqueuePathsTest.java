package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The client's own connections and the application's connection give the same outcomes. */
class EnqueuePathsTest {
    static final Task<EnqueueTest.Order> CHARGE = EnqueueTest.CHARGE;
    static final Task<Note> NOTIFY = Task.of("notify_customer", Note.class).idempotent(true);

    record Note(String to) {}

    /** Where an enqueue runs. */
    enum Path {
        POOLED {
            @Override
            List<EnqueueResult> enqueue(FlexiQ queue, Connection connection, List<EnqueueRequest<?>> requests) {
                return requests.size() == 1 ? List.of(one(queue, requests.get(0))) : queue.enqueueManyWithResults(requests);
            }

            private <T> EnqueueResult one(FlexiQ queue, EnqueueRequest<T> r) {
                return queue.enqueueWithResult(r.task(), r.payload(), r.options());
            }
        },
        CONNECTION {
            @Override
            List<EnqueueResult> enqueue(FlexiQ queue, Connection connection, List<EnqueueRequest<?>> requests) {
                return requests.size() == 1 ? List.of(one(queue, connection, requests.get(0)))
                        : queue.enqueueManyWithResults(connection, requests);
            }

            private <T> EnqueueResult one(FlexiQ queue, Connection connection, EnqueueRequest<T> r) {
                return queue.enqueueWithResult(connection, r.task(), r.payload(), r.options());
            }
        };

        abstract List<EnqueueResult> enqueue(FlexiQ queue, Connection connection, List<EnqueueRequest<?>> requests);
    }

    static EnqueueRequest<EnqueueTest.Order> charge(long amount, EnqueueOptions options) {
        return EnqueueRequest.of(CHARGE, new EnqueueTest.Order(1, amount), options);
    }

    static EnqueueOptions unique(String key) {
        return EnqueueOptions.builder().uniqueKey(key).build();
    }

    /** What a call gave: outcomes with ids, or the exception with what it names. */
    static String transcript(Path path, FlexiQ queue, Connection connection, List<EnqueueRequest<?>> requests) {
        try {
            List<String> out = new ArrayList<>();
            for (EnqueueResult r : path.enqueue(queue, connection, requests)) {
                out.add(r.outcome() + " " + r.jobId());
            }
            return String.join(", ", out);
        } catch (IdempotencyConflictException e) {
            return "conflict with " + e.existingJobId().orElse("-") + " at entry " + e.entryIndex() + " (earlier entry "
                    + e.earlierEntryIndex().map(String::valueOf).orElse("-") + "): " + e.fields();
        }
    }

    @ParameterizedTest
    @EnumSource(Path.class)
    void theSameInputsGiveTheSameOutcomes(Path path) throws SQLException {
        // A fresh schema each: ids start at 1 for both paths.
        try (FlexiQ queue = TestDatabase.client(); Connection connection = TestDatabase.jdbc("postgres")) {
            List<List<EnqueueRequest<?>>> calls = List.of(
                    List.of(charge(1, unique("a"))),
                    List.of(charge(1, unique("a"))),
                    List.of(charge(2, unique("a"))),
                    List.of(charge(3, EnqueueOptions.defaults())),
                    List.of(EnqueueRequest.of(NOTIFY, new Note("x"), EnqueueOptions.defaults())),
                    List.of(EnqueueRequest.of(NOTIFY, new Note("x"), EnqueueOptions.defaults())),
                    List.of(charge(4, EnqueueOptions.builder().idempotencyKey("i").build())),
                    List.of(charge(4, EnqueueOptions.builder().idempotencyKey("i")
                            .keyRetention(Duration.ofHours(24)).build())),
                    List.of(charge(4, unique("i"))),
                    List.of(charge(5, unique("b")), charge(6, unique("c")), charge(5, unique("b")),
                            charge(7, EnqueueOptions.defaults()), charge(1, unique("a"))),
                    List.of(charge(8, unique("d")), charge(9, unique("d"))),
                    List.of(charge(10, unique("e")), charge(2, unique("a"))),
                    List.of(charge(10, unique("e"))),
                    List.of(charge(11, EnqueueOptions.builder().uniqueKey("f").priority(3).build()),
                            charge(11, EnqueueOptions.builder().uniqueKey("f").priority(4).build())));
            List<String> got = new ArrayList<>();
            for (List<EnqueueRequest<?>> call : calls) {
                got.add(transcript(path, queue, connection, call));
            }
            // Both paths draw ids alike: a single replay only reads and draws none; a single
            // conflict, and every entry of a batch sent to PostgreSQL, draws one.
            assertEquals(List.of(
                    "ACCEPTED 1",
                    "REPLAYED 1",
                    "conflict with 1 at entry 0 (earlier entry -): [payload]",
                    "ACCEPTED 3",
                    "ACCEPTED 4",
                    "REPLAYED 4",
                    "ACCEPTED 5",
                    "REPLAYED 5",
                    "conflict with 5 at entry 0 (earlier entry -): [keyRetention]",
                    "ACCEPTED 7, ACCEPTED 8, REPLAYED 7, ACCEPTED 9, REPLAYED 1",
                    "conflict with - at entry 1 (earlier entry 0): [payload]",
                    "conflict with 1 at entry 1 (earlier entry -): [payload]",
                    "ACCEPTED 13",
                    "conflict with - at entry 1 (earlier entry 0): [priority]"), got);
        }
    }
}
