package io.flexiq;

import java.util.ArrayList;
import java.util.List;

/**
 * Run by {@link TestQueueTest} in a JVM where the native library cannot load: a unit test written
 * against {@link JobQueue} still runs on {@link TestQueue}. Prints what it saw, then whether the
 * native library really was out of reach.
 */
public final class TestQueueChild {
    private TestQueueChild() {}

    /** No arguments. */
    public static void main(String[] args) {
        List<String> seen = new ArrayList<>();
        TestQueue queue = TestQueue.create().handle(TestQueueTest.CHARGE,
                (order, job) -> seen.add(order.customerId() + ":" + order.amountCents() + " attempt " + job.attempt()));
        TestQueueTest.placeOrder(queue, new EnqueueTest.Order(7, 300));
        TestQueueTest.placeOrder(queue, new EnqueueTest.Order(7, 300));
        System.out.println("handled " + seen);
        try {
            new CanonicalJsonSerializer().serialize(new EnqueueTest.Order(7, 300));
            System.out.println("native library loaded");
        } catch (NativeLibraryException e) {
            System.out.println("native library unavailable");
        }
    }
}
