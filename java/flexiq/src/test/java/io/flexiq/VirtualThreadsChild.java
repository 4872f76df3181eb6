package io.flexiq;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Run by {@link VirtualThreadsTest} on Java 21 or later: a worker whose handlers run on virtual
 * threads holds 1,000 sleeping handlers at once. Arguments: the database URL and a fresh schema.
 */
public final class VirtualThreadsChild {
    private VirtualThreadsChild() {}

    /** A payload. */
    public record Nap(int n) {}

    /** Prints what it saw; exits non-zero if the handlers did not all run at once. */
    public static void main(String[] args) throws Exception {
        int handlers = 1_000;
        // Through reflection: the tests compile for Java 17, which has no virtual threads.
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        ThreadFactory virtual = (ThreadFactory) Class.forName("java.lang.Thread$Builder")
                .getMethod("factory").invoke(builder);
        Task<Nap> nap = Task.of("nap", Nap.class);
        CountDownLatch allAsleep = new CountDownLatch(handlers);
        CountDownLatch wake = new CountDownLatch(1);
        AtomicInteger onVirtual = new AtomicInteger();
        try (FlexiQ queue = FlexiQ.builder(args[0]).schema(args[1]).migrate(true).build()) {
            List<Nap> naps = new ArrayList<>();
            for (int i = 0; i < handlers; i++) {
                naps.add(new Nap(i));
            }
            queue.enqueueMany(nap, naps, EnqueueOptions.defaults());
            Worker worker = queue.worker().concurrency(handlers).handlerThreads(virtual)
                    .handle(nap, (n, job) -> {
                        if ((Boolean) Thread.class.getMethod("isVirtual").invoke(Thread.currentThread())) {
                            onVirtual.incrementAndGet();
                        }
                        allAsleep.countDown();
                        // Sleeps until every handler is asleep: only possible if all run at once.
                        wake.await();
                    }).build().start();
            boolean together = allAsleep.await(120, TimeUnit.SECONDS);
            int platformThreads = ManagementFactory.getThreadMXBean().getThreadCount();
            wake.countDown();
            worker.close();
            System.out.println("asleep at once: " + (handlers - allAsleep.getCount()) + "; on virtual threads: "
                    + onVirtual.get() + "; platform threads: " + platformThreads);
            System.exit(together ? 0 : 1);
        }
    }
}
