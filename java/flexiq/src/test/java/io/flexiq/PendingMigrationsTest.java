package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Whether a client's schema is migrated, asked without migrating it. */
class PendingMigrationsTest {
    @Test
    void aSchemaNeverMigratedHasEverythingPendingAndAMigratedOneNothing() {
        try (FlexiQ queue = FlexiQ.builder(TestDatabase.url()).schema(TestDatabase.freshSchema()).build()) {
            int pending = queue.pendingMigrations();
            assertTrue(pending > 4, "migrations and definitions pending: " + pending);
            assertEquals(pending, queue.migrate());
            assertEquals(0, queue.pendingMigrations());
        }
    }
}
