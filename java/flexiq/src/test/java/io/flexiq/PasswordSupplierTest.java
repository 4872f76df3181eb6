package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A password supplier is asked by the native library, from whatever thread opens a connection
 * (a caller's, or one of the library's own, as the wake-up listener's), and what it throws
 * reaches the caller by name. The test server trusts every local connection, so any password
 * opens one; the rotation of a real password is tested in the core's integration tests.
 */
class PasswordSupplierTest {
    private static final Task<EnqueueTest.Order> CHARGE = EnqueueTest.CHARGE;

    @Test
    void theSupplierIsAskedForTheClientsConnectionsTheListenersIncluded() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        try (FlexiQ queue = FlexiQ.builder(TestDatabase.url()).schema(TestDatabase.freshSchema()).poolSize(2)
                .migrate(true).passwordSupplier(() -> {
                    asked.incrementAndGet();
                    return "a-token";
                }).build()) {
            assertTrue(asked.get() > 0, "asked while connecting");
            int beforeWorker = asked.get();
            // An idle worker polls every ten minutes: only the listener, connected with the
            // supplier's password, can get it to the job in time.
            Set<String> ran = ConcurrentHashMap.newKeySet();
            WorkerTest.running(queue.worker().handle(CHARGE, (order, job) -> ran.add(job.jobId()))
                    .pollInterval(Duration.ofMinutes(10)), () -> {
                WorkerTest.await("the listener to connect", () -> asked.get() > beforeWorker);
                String late = queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1));
                WorkerTest.await("a wake-up to run the job", () -> ran.contains(late));
            });
        }
    }

    @Test
    void whatTheSupplierThrowsFailsTheConnectionByName() {
        StorageUnavailableException e = assertThrows(StorageUnavailableException.class,
                () -> FlexiQ.builder(TestDatabase.url()).schema(TestDatabase.freshSchema())
                        .passwordSupplier(() -> {
                            throw new IOException("the token service is down");
                        }).build());
        assertTrue(e.getMessage().contains("password supplier")
                && e.getMessage().contains("java.io.IOException: the token service is down"), e.getMessage());
        StorageUnavailableException nothing = assertThrows(StorageUnavailableException.class,
                () -> FlexiQ.builder(TestDatabase.url()).schema(TestDatabase.freshSchema())
                        .passwordSupplier(() -> null).build());
        assertTrue(nothing.getMessage().contains("the password supplier returned null"), nothing.getMessage());
    }

    @Test
    void aNullSupplierIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FlexiQ.builder(TestDatabase.url()).passwordSupplier(null));
        assertEquals("passwordSupplier must not be null", e.getMessage());
    }
}
