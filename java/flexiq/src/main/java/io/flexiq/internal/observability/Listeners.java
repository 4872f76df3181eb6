package io.flexiq.internal.observability;

import io.flexiq.EnqueueEvent;
import io.flexiq.FlexiQ;
import io.flexiq.FlexiQListener;
import io.flexiq.JobEvent;
import io.flexiq.internal.ApiAccess;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client's listeners, each fed by a bounded queue and a daemon thread of its own, so that
 * publishing an event never waits for a listener: a full queue drops the event instead; and its
 * tracing, if on.
 */
public final class Listeners {
    private static final ApiAccess API = ApiAccess.get();
    private static final Logger LOG = LoggerFactory.getLogger(FlexiQ.class);
    /** The most events waiting for one listener. */
    public static final int BACKLOG = 10_000;
    private static final long REPORT_NANOS = TimeUnit.MINUTES.toNanos(1);
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final CopyOnWriteArrayList<Delivery> deliveries = new CopyOnWriteArrayList<>();
    private volatile Tracing tracing;

    /** The client's tracing, or null while it is off. */
    public Tracing tracing() {
        return tracing;
    }

    /** Turns tracing on (off with null), for the calls and attempts that begin from now on. */
    public void trace(Tracing tracing) {
        this.tracing = tracing;
    }

    /** Whether anyone listens: publishers build no event otherwise. */
    public boolean active() {
        return !deliveries.isEmpty();
    }

    public void add(FlexiQListener listener) {
        Delivery d = new Delivery(listener);
        deliveries.add(d);
        d.thread.start();
    }

    /** Stops delivering to {@code listener} once it has what was published before; false if it was not listening. */
    public boolean remove(FlexiQListener listener) {
        for (Delivery d : deliveries) {
            if (d.listener == listener && deliveries.remove(d)) {
                d.stop();
                return true;
            }
        }
        return false;
    }

    public void enqueued(EnqueueEvent e) {
        publish(e, FlexiQListener::onEnqueue);
    }

    public void job(JobEvent e) {
        publish(e, FlexiQListener::onJob);
    }

    /**
     * Publishes a change made by a client call or by a rescue to a job known by id, task, queue
     * and attempt; {@code error} says why the attempt failed, if it did.
     */
    public void changed(JobEvent.Kind kind, long jobId, String task, String queue, int attempt, int maxAttempts,
            String error) {
        job(API.jobEvent(kind, Long.toString(jobId), task, queue, attempt, maxAttempts, error, null, null, null));
    }

    /** Stops every delivery once it has what was published before. */
    public void close() {
        for (Delivery d : deliveries) {
            deliveries.remove(d);
            d.stop();
        }
    }

    private <E> void publish(E event, BiConsumer<FlexiQListener, E> call) {
        for (Delivery d : deliveries) {
            d.offer(() -> call.accept(d.listener, event));
        }
    }

    /** One listener's queue and thread. */
    private static final class Delivery implements Runnable {
        /** Queued after the last event: the thread ends when it takes it. */
        private static final Runnable STOP = () -> { };

        final FlexiQListener listener;
        final Thread thread;
        private final BlockingQueue<Runnable> queue = new ArrayBlockingQueue<>(BACKLOG);
        private final Rate dropped = new Rate();
        private final Rate thrown = new Rate();

        Delivery(FlexiQListener listener) {
            this.listener = listener;
            this.thread = new Thread(this, "flexiq-listener-" + THREADS.incrementAndGet());
            thread.setDaemon(true);
        }

        void offer(Runnable call) {
            if (!queue.offer(call) && dropped.due()) {
                LOG.warn("listener {} falls behind: {} events were dropped since the last report (it may"
                        + " hold at most {} waiting); make it faster or hand its work to a thread of its own",
                        listener, dropped.take(), BACKLOG);
            }
        }

        void stop() {
            try {
                if (!queue.offer(STOP, 1, TimeUnit.SECONDS)) {
                    // Stuck in one event with a full queue: what waits is dropped.
                    thread.interrupt();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                thread.interrupt();
            }
        }

        @Override
        public void run() {
            while (true) {
                Runnable call;
                try {
                    call = queue.take();
                } catch (InterruptedException e) {
                    return;
                }
                if (call == STOP) {
                    return;
                }
                try {
                    call.run();
                } catch (RuntimeException | Error e) {
                    if (thrown.due()) {
                        LOG.warn("listener {} threw ({} times since the last report); its events go on", listener,
                                thrown.take(), e);
                    }
                }
            }
        }
    }

    /** Counts occurrences and says when one is due to be reported: the first, then at most once a minute. */
    private static final class Rate {
        private long count;
        private long reportedNanos;
        private boolean reported;

        synchronized boolean due() {
            count++;
            long now = System.nanoTime();
            if (reported && now - reportedNanos < REPORT_NANOS) {
                return false;
            }
            reported = true;
            reportedNanos = now;
            return true;
        }

        synchronized long take() {
            long n = count;
            count = 0;
            return n;
        }
    }
}
