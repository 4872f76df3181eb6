package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.EnqueueTest.Order;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What callers get when the pool has no connection for them, through the real library. */
class ConnectionPoolTest {
    static long waitingForALock(String schema) {
        try {
            // By the lock they wait for: a statement's text may name the table only past the
            // first kilobyte, all that pg_stat_activity keeps of it by default.
            return TestDatabase.scalar("SELECT count(DISTINCT pid) FROM pg_locks WHERE NOT granted"
                    + " AND relation = to_regclass('" + schema + ".jobs')");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aPoolBusyForTheAcquireTimeoutFailsWithPoolExhaustedExceptionNamingIt() throws Exception {
        String schema = TestDatabase.freshSchema();
        ExecutorService caller = Executors.newSingleThreadExecutor();
        try (FlexiQ queue = FlexiQ.builder(TestDatabase.url()).schema(schema).poolSize(1)
                .acquireTimeout(Duration.ofMillis(200)).migrate(true).build();
                Connection lock = TestDatabase.jdbc("postgres");
                Statement s = lock.createStatement()) {
            lock.setAutoCommit(false);
            s.execute("LOCK TABLE " + schema + ".jobs IN ACCESS EXCLUSIVE MODE");
            Future<String> holder = caller.submit(() -> queue.enqueue(EnqueueTest.CHARGE, new Order(1, 1)));
            WorkerTest.await("the first enqueue to wait for the lock, holding the only connection",
                    () -> waitingForALock(schema) == 1);

            PoolExhaustedException e = assertThrows(PoolExhaustedException.class,
                    () -> queue.enqueue(EnqueueTest.CHARGE, new Order(2, 2)));
            assertEquals("the only connection of FlexiQ's pool for schema " + schema + " was busy for 200ms;"
                    + " raise poolSize or acquireTimeout, or look for long-running statements", e.getMessage());
            assertInstanceOf(StorageUnavailableException.class, e, "nothing was written; may be repeated");

            lock.rollback();
            assertNotNull(holder.get(30, TimeUnit.SECONDS), "the call holding the connection went on");
        } finally {
            caller.shutdownNow();
        }
    }

    @Test
    void aServerThatTakesNoMoreClientsIsUnavailable() throws Exception {
        String role = TestDatabase.freshSchema() + "_limited";
        TestDatabase.execute("CREATE ROLE " + role + " LOGIN CONNECTION LIMIT 1");
        try (Connection only = TestDatabase.jdbc(role)) {
            assertTrue(only.isValid(5), "the role's one connection is open");
            StorageUnavailableException e = assertThrows(StorageUnavailableException.class,
                    () -> FlexiQ.builder(TestDatabase.url(role)).build().close());
            assertEquals(StorageUnavailableException.class, e.getClass(), "the server, not the pool, is full");
            assertTrue(e.getMessage().contains("too many connections for role"), e.getMessage());
            assertTrue(e.getMessage().contains("raise its max_connections"), e.getMessage());
        }
    }

    @Test
    void onlyPostgresUrlsAreTakenAndAJdbcUrlIsNamedAsSuch() {
        String jdbc = TestDatabase.jdbcUrl();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FlexiQ.builder(jdbc).build().close());
        assertTrue(e.getMessage().startsWith("a JDBC URL was given; FlexiQ takes libpq's form, postgres://"),
                e.getMessage());
        String mysql = TestDatabase.url().replaceFirst("^postgres://", "mysql://");
        e = assertThrows(IllegalArgumentException.class, () -> FlexiQ.builder(mysql).build().close());
        assertTrue(e.getMessage().startsWith("URL scheme mysql:// is not PostgreSQL's"), e.getMessage());
        try (FlexiQ client = FlexiQ.builder(TestDatabase.url().replaceFirst("^postgres://", "postgresql://"))
                .schema(TestDatabase.freshSchema()).migrate(true).build()) {
            assertEquals(0, client.migrate(), "postgresql:// is PostgreSQL's too");
        }
    }
}
