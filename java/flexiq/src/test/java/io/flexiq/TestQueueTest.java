package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Test mode: handlers run at enqueue, without storage, and dedup does nothing. */
class TestQueueTest {
    static final Task<EnqueueTest.Order> CHARGE = EnqueueTest.CHARGE;

    /** Application code as it would be written: against the interface. */
    static String placeOrder(JobQueue queue, EnqueueTest.Order order) {
        return queue.enqueue(CHARGE, order, EnqueueOptions.builder().uniqueKey("order-" + order.customerId())
                .queue("payments").maxAttempts(5).build());
    }

    @Test
    void handlersRunAtEnqueueWithTheirContext() {
        List<String> seen = new ArrayList<>();
        TestQueue queue = TestQueue.create().handle(CHARGE, (order, job) -> seen.add(job.jobId() + " "
                + job.attempt() + "/" + job.maxAttempts() + " " + job.queue() + " " + order.amountCents()));
        String id = placeOrder(queue, new EnqueueTest.Order(1, 250));
        assertEquals(List.of(id + " 1/5 payments 250"), seen, "ran before enqueue returned");
    }

    @Test
    void dedupIsANoOpInTestMode() {
        List<Long> charged = new ArrayList<>();
        TestQueue queue = TestQueue.create().handle(CHARGE, (order, job) -> charged.add(order.amountCents()));
        EnqueueResult first = queue.enqueueWithResult(CHARGE, new EnqueueTest.Order(1, 1),
                EnqueueOptions.builder().uniqueKey("same").build());
        EnqueueResult second = queue.enqueueWithResult(CHARGE, new EnqueueTest.Order(1, 2),
                EnqueueOptions.builder().uniqueKey("same").build());
        assertEquals(List.of(1L, 2L), charged);
        assertNotEquals(first.jobId(), second.jobId());
        assertEquals(EnqueueOutcome.ACCEPTED, second.outcome(), "no replay, no conflict");
    }

    @Test
    void batchesRunEachEntryInOrder() {
        List<Long> charged = new ArrayList<>();
        TestQueue queue = TestQueue.create().handle(CHARGE, (order, job) -> charged.add(order.amountCents()));
        List<String> ids = queue.enqueueMany(CHARGE, List.of(new EnqueueTest.Order(1, 3), new EnqueueTest.Order(1, 4)),
                EnqueueOptions.defaults());
        assertEquals(2, ids.size());
        assertEquals(List.of(3L, 4L), charged);
    }

    @Test
    void nullListsAreRefusedByNameAsByTheClient() {
        TestQueue queue = TestQueue.create().handle(CHARGE, (order, job) -> { });
        assertEquals("payloads", assertThrows(NullPointerException.class,
                () -> queue.enqueueMany(CHARGE, null, EnqueueOptions.defaults())).getMessage());
        assertEquals("requests holds null at index 0", assertThrows(NullPointerException.class,
                () -> queue.enqueueMany(Arrays.asList((EnqueueRequest<?>) null))).getMessage());
    }

    @Test
    void aFailingHandlerFailsTheEnqueueAndAMissingOneIsRefused() {
        IllegalStateException boom = new IllegalStateException("card declined");
        TestQueue queue = TestQueue.create().handle(CHARGE, (order, job) -> {
            throw boom;
        });
        FlexiQException e = assertThrows(FlexiQException.class, () -> placeOrder(queue, new EnqueueTest.Order(1, 1)));
        assertSame(boom, e.getCause());
        assertThrows(IllegalStateException.class,
                () -> TestQueue.create().enqueue(CHARGE, new EnqueueTest.Order(1, 1)));
    }

    @Test
    void checkpointsWorkWithinTheOneAttempt() {
        List<String> stages = new ArrayList<>();
        TestQueue queue = TestQueue.create().handle(CHARGE, (order, job) -> {
            String first = job.checkpoint("charge", String.class, () -> "ch_" + order.amountCents());
            String again = job.checkpoint("charge", String.class, () -> "never");
            stages.add(first + " " + again);
        });
        queue.enqueue(CHARGE, new EnqueueTest.Order(1, 9));
        assertEquals(List.of("ch_9 ch_9"), stages);
    }

    @Test
    void runsWhereTheNativeLibraryCannotLoad() throws Exception {
        // No native library on the class path, and the loader pointed at a file that is not there.
        String classPath = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(entry -> !entry.contains("native-resources") && !entry.endsWith(".so"))
                .collect(Collectors.joining(File.pathSeparator));
        Process child = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", classPath, "-Dflexiq.native.path=/nonexistent/libflexiq_jni.so", TestQueueChild.class.getName())
                .redirectErrorStream(true)
                .start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, child.waitFor(), output);
        assertEquals("handled [7:300 attempt 1, 7:300 attempt 1]\nnative library unavailable\n", output);
    }
}
