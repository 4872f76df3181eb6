package io.flexiq.spring;

import io.flexiq.FlexiQ;
import io.flexiq.JobContext;
import io.flexiq.Worker;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the application's {@link FlexiQHandler} beans in one {@link Worker} that starts and stops
 * with the application context. Built by the auto-configuration, it completes the job of a
 * handler whose {@code handle} method is {@code @Transactional} in that transaction (see
 * {@link JobContext#completeIn}).
 *
 * <p><b>Phase.</b> {@value #PHASE} ({@code SmartLifecycle.DEFAULT_PHASE - 1024}), the phase of
 * Spring Boot's web server graceful shutdown. Spring stops the beans of one phase together, so
 * the worker lets its running handlers finish (for up to {@code flexiq.worker.shutdown-timeout})
 * while the web server drains its requests: the worker adds no time to the graceful shutdown
 * beyond its own timeout, which should stay within {@code spring.lifecycle.timeout-per-shutdown-phase}.
 * Handlers still running at the timeout are interrupted and their jobs given back to the queue,
 * the attempt not counted, so another process (or this one's next start) runs them again. Every
 * lifecycle phase ends before any bean is destroyed, so the application's {@code DataSource} and
 * the FlexiQ client are still open while handlers finish. At startup the worker starts after the
 * web server (a lower phase), once the context is refreshed.
 */
public final class FlexiQWorkerLifecycle implements SmartLifecycle {
    /** Spring Boot's phase for the web server's graceful shutdown. */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 1024;

    private final FlexiQ client;
    private final List<FlexiQHandler<?>> handlers;
    private final FlexiQProperties.Worker settings;
    /** The handlers' threads, or null for the worker's own platform threads. */
    private final ThreadFactory handlerThreads;
    /** Completes the jobs of {@code @Transactional} handlers in their transaction; null: no such binding. */
    private final HandlerTransactions transactions;
    private final Object lock = new Object();
    private Worker worker;

    /**
     * A lifecycle running {@code handlers} with {@code settings}, on threads of
     * {@code handlerThreads} (null: the worker's own platform threads).
     *
     * @throws IllegalStateException if two handlers name the same task
     */
    public FlexiQWorkerLifecycle(FlexiQ client, List<FlexiQHandler<?>> handlers, FlexiQProperties.Worker settings,
            ThreadFactory handlerThreads) {
        this(client, handlers, settings, handlerThreads, null);
    }

    /**
     * As the auto-configuration builds it: also completing the jobs of {@code @Transactional}
     * handlers in their transaction through {@code transactions}, if not null.
     */
    FlexiQWorkerLifecycle(FlexiQ client, List<FlexiQHandler<?>> handlers, FlexiQProperties.Worker settings,
            ThreadFactory handlerThreads, HandlerTransactions transactions) {
        this.transactions = transactions;
        this.client = client;
        this.handlers = List.copyOf(handlers);
        this.settings = settings;
        this.handlerThreads = handlerThreads;
        Map<String, FlexiQHandler<?>> byTask = new HashMap<>();
        for (FlexiQHandler<?> handler : this.handlers) {
            FlexiQHandler<?> other = byTask.putIfAbsent(handler.task().name(), handler);
            if (other != null) {
                throw new IllegalStateException("two FlexiQHandler beans handle task " + handler.task().name() + ": "
                        + other.getClass().getName() + " and " + handler.getClass().getName() + "; keep one");
            }
        }
    }

    @Override
    public void start() {
        synchronized (lock) {
            if (worker != null) {
                return;
            }
            Worker.Builder builder = client.worker();
            PropertyCheck.apply("flexiq.worker.queues", settings.getQueues(),
                    queues -> builder.queues(queues.toArray(new String[0])));
            PropertyCheck.apply("flexiq.worker.concurrency", settings.getConcurrency(), builder::concurrency);
            PropertyCheck.apply("flexiq.worker.lease", settings.getLease(), builder::lease);
            PropertyCheck.apply("flexiq.worker.poll-interval", settings.getPollInterval(), builder::pollInterval);
            PropertyCheck.apply("flexiq.worker.shutdown-timeout", settings.getShutdownTimeout(),
                    builder::shutdownTimeout);
            if (handlerThreads != null) {
                builder.handlerThreads(handlerThreads);
            }
            for (FlexiQHandler<?> handler : handlers) {
                register(builder, handler, transactions);
            }
            worker = builder.build().start();
        }
    }

    private static <T> void register(Worker.Builder builder, FlexiQHandler<T> handler, HandlerTransactions transactions) {
        builder.handle(handler.task(), transactions == null ? handler : transactions.bind(handler));
    }

    /** Stops the worker on this thread: running handlers finish within the shutdown timeout. */
    @Override
    public void stop() {
        Worker stopping = take();
        if (stopping != null) {
            stopping.close();
        }
    }

    /**
     * Stops the worker on a thread of its own and then calls {@code callback}, so that the other
     * beans of this phase (the web server's graceful shutdown) stop meanwhile.
     */
    @Override
    public void stop(Runnable callback) {
        Worker stopping = take();
        if (stopping == null) {
            callback.run();
            return;
        }
        Thread thread = new Thread(() -> {
            try {
                stopping.close();
            } finally {
                callback.run();
            }
        }, stopping + "-stop");
        thread.start();
    }

    private Worker take() {
        synchronized (lock) {
            Worker taken = worker;
            worker = null;
            return taken;
        }
    }

    @Override
    public boolean isRunning() {
        synchronized (lock) {
            return worker != null;
        }
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    /** The tasks this worker runs. */
    public List<String> tasks() {
        return handlers.stream().map(h -> h.task().name()).toList();
    }

    /** The worker's settings. */
    FlexiQProperties.Worker settings() {
        return settings;
    }
}
