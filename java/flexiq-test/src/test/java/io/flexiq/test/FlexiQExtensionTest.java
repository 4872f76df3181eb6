package io.flexiq.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.FlexiQ;
import io.flexiq.JobInfo;
import io.flexiq.JobState;
import io.flexiq.Task;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** What a test class marked {@code @FlexiQTest} receives. */
@FlexiQTest
class FlexiQExtensionTest {
    record Ping(String text) {}

    static final Task<Ping> PING = Task.of("ping", Ping.class);

    private static FlexiQ fromBeforeAll;
    private final FlexiQ fromConstructor;
    private FlexiQ fromBeforeEach;

    FlexiQExtensionTest(FlexiQ queue) {
        fromConstructor = queue;
    }

    @BeforeAll
    static void rememberClient(FlexiQ queue) {
        fromBeforeAll = queue;
    }

    @BeforeEach
    void rememberClientAgain(FlexiQ queue) {
        fromBeforeEach = queue;
    }

    @Test
    void aTestGetsAMigratedClientOnASchemaOfItsOwnThatEnqueuesAndReadsBack(FlexiQ queue, PostgresServer server)
            throws Exception {
        assertTrue(queue.schema().startsWith("flexiq_test_"), queue.schema());
        assertTrue(Db.schemaExists(server.jdbcUrl(), queue.schema()), "schema " + queue.schema() + " in " + server);

        String id = queue.enqueue(PING, new Ping("hello"));
        JobInfo job = queue.getJob(id).orElseThrow();
        assertEquals(PING.name(), job.task());
        assertEquals(JobState.AVAILABLE, job.state());
        assertEquals("1", Db.query(server.jdbcUrl(), "SELECT count(*) FROM \"" + queue.schema() + "\".jobs"));
    }

    @Test
    void constructorLifecycleMethodsAndTestsShareTheClassClient(FlexiQ queue) {
        assertSame(fromConstructor, queue);
        assertSame(fromBeforeAll, queue);
        assertSame(fromBeforeEach, queue);
    }

    @Nested
    class Inner {
        @Test
        void nestedClassesShareTheEnclosingClassClient(FlexiQ queue) {
            assertSame(fromConstructor, queue);
        }
    }
}
