package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** dropSchema uninstalls: the schema goes with everything in it, and the client closes. */
class DropSchemaTest {
    private static long schemas(String schema) throws Exception {
        return TestDatabase.scalar("SELECT count(*) FROM pg_namespace WHERE nspname = '" + schema + "'");
    }

    @Test
    void theOwnerDropsTheSchemaAndItsWorkersStopFirst() throws Exception {
        FlexiQ client = TestDatabase.client();
        String schema = client.schema();
        client.enqueue(EnqueueTest.CHARGE, new EnqueueTest.Order(1, 100));
        Worker worker = client.worker().handle(EnqueueTest.CHARGE, (order, job) -> { })
                .pollInterval(Duration.ofMillis(50)).build().start();
        assertEquals(1, schemas(schema));
        client.dropSchema();
        assertEquals(0, schemas(schema));
        assertThrows(IllegalStateException.class, () -> client.enqueue(EnqueueTest.CHARGE, new EnqueueTest.Order(1, 2)),
                "the client is closed");
        assertThrows(IllegalStateException.class, worker::start, "its worker was closed first");
    }

    @Test
    void aRoleThatDoesNotOwnTheSchemaCannotDropIt() throws Exception {
        try (FlexiQ owner = TestDatabase.client()) {
            String role = "drop_" + owner.schema();
            TestDatabase.execute("CREATE ROLE " + role + " LOGIN");
            owner.grantProducer(role);
            FlexiQ producer = FlexiQ.builder(TestDatabase.url(role)).schema(owner.schema()).build();
            StorageException e = assertThrows(StorageException.class, producer::dropSchema);
            assertFalse(e instanceof StorageUnavailableException, e.getMessage());
            assertEquals(1, schemas(owner.schema()));
            producer.close();
            owner.dropSchema();
            assertEquals(0, schemas(owner.schema()));
        }
    }
}
