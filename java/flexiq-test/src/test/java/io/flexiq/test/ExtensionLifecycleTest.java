package io.flexiq.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.flexiq.FlexiQ;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/** Schemas per class, dropped after it; an existing database instead of the JVM's server. */
@FlexiQTest
class ExtensionLifecycleTest {
    @AfterEach
    void forgetProbes() {
        SchemaProbes.SEEN.clear();
        SchemaProbes.inspector = queue -> {};
    }

    @Test
    void twoClassesGetTwoSchemasEachDroppedAndItsClientClosedAfterItsClass(PostgresServer server) throws Exception {
        SchemaProbes.inspector = queue -> assertTrue(Db.schemaExists(server.jdbcUrl(), queue.schema()),
                "schema " + queue.schema() + " exists while its class runs");

        run(EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(SchemaProbes.First.class), selectClass(SchemaProbes.Second.class)))
                .assertStatistics(stats -> stats.succeeded(2).failed(0));

        List<FlexiQ> seen = SchemaProbes.SEEN;
        assertEquals(2, seen.size());
        assertNotEquals(seen.get(0).schema(), seen.get(1).schema());
        for (FlexiQ queue : seen) {
            assertFalse(Db.schemaExists(server.jdbcUrl(), queue.schema()), "schema " + queue.schema() + " dropped");
            assertThrows(IllegalStateException.class, () -> queue.enqueue(FlexiQExtensionTest.PING,
                    new FlexiQExtensionTest.Ping("after the class")), "client closed");
        }
    }

    @Test
    void aConfiguredDatabaseIsUsedInsteadOfTheJvmsServer(PostgresServer server) throws Exception {
        try (PostgresServer existing = PostgresServer.builder().durable(false).start()) {
            SchemaProbes.inspector = queue -> {
                assertTrue(Db.schemaExists(existing.jdbcUrl(), queue.schema()), "schema in the configured database");
                assertFalse(Db.schemaExists(server.jdbcUrl(), queue.schema()), "schema not in the JVM's server");
            };

            run(EngineTestKit.engine("junit-jupiter")
                    .configurationParameter(TestDatabase.URL_PARAMETER, existing.url())
                    .selectors(selectClass(SchemaProbes.First.class)))
                    .assertStatistics(stats -> stats.succeeded(1).failed(0));
            assertFalse(Db.schemaExists(existing.jdbcUrl(), SchemaProbes.SEEN.get(0).schema()), "schema dropped");

            Events refused = run(EngineTestKit.engine("junit-jupiter")
                    .configurationParameter(TestDatabase.URL_PARAMETER, existing.url())
                    .selectors(selectClass(SchemaProbes.WantsServer.class)));
            refused.assertStatistics(stats -> stats.failed(1));
            Throwable failure = refused.failed().stream().findFirst().orElseThrow()
                    .getRequiredPayload(TestExecutionResult.class).getThrowable().orElseThrow();
            assertTrue(failure instanceof ParameterResolutionException, failure.toString());
            assertTrue(failure.getMessage().contains("FLEXIQ_TEST_DATABASE_URL"), failure.getMessage());
        }
    }

    /**
     * The test events of a run of the probes; a failure of a class as a whole (its schema's drop)
     * fails here.
     */
    private static Events run(EngineTestKit.Builder kit) {
        EngineExecutionResults results = kit.configurationParameter(SchemaProbes.PROBING, "true").execute();
        results.containerEvents().assertStatistics(stats -> stats.failed(0));
        return results.testEvents();
    }
}
