package io.flexiq.micrometer;

import io.flexiq.EnqueueEvent;
import io.flexiq.FlexiQ;
import io.flexiq.FlexiQListener;
import io.flexiq.JobCount;
import io.flexiq.JobEvent;
import io.flexiq.JobState;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Micrometer meters of a {@link FlexiQ} client and its workers. Needs {@code micrometer-core}
 * on the class path (FlexiQ itself does not). Bind it to a registry, and close it before the
 * client:
 *
 * <pre>{@code
 * FlexiQMetrics metrics = new FlexiQMetrics(queue);
 * metrics.bindTo(registry);
 * }</pre>
 *
 * <ul>
 *   <li>{@code flexiq.enqueues} (counter; {@code task}, {@code outcome}: {@code accepted},
 *       {@code replayed}, {@code conflict}, …): enqueue entries by how they were decided.
 *   <li>{@code flexiq.attempts} (counter; {@code task}, {@code result}: {@code completed},
 *       {@code failed}): attempts by how they ended, once recorded; an attempt fails when its
 *       handler throws or times out, or when its worker's lease passes.
 *   <li>{@code flexiq.dead.letters} (counter; {@code task}): jobs dead-lettered, by failure or
 *       by a lease that passed on their last attempt.
 *   <li>{@code flexiq.rescues} (counter; {@code task}): jobs put back to work after their
 *       worker's lease passed.
 *   <li>{@code flexiq.handler.duration} (timer; {@code task}, {@code result}): how long handlers
 *       ran (attempts whose handler never ran or never returned are not timed).
 *   <li>{@code flexiq.start.latency} (timer; {@code task}, {@code queue}): from a job's due time
 *       to its handler's start.
 *   <li>{@code flexiq.jobs} (gauge; {@code queue}, {@code state}: {@code available},
 *       {@code scheduled}, {@code retryable}, {@code running}, {@code dead}): jobs by queue and
 *       state, read by one indexed statement when bound, then every refresh interval (30 s by
 *       default) on a thread of its own, never per scrape, and soon after an enqueue or a job
 *       names a queue not shown yet. The queues given to the constructor (a worker's, say) are
 *       shown from the start, at 0 while they hold no jobs. Finished jobs are not counted.
 * </ul>
 * Events reach the meters through a {@link FlexiQListener}, after the fact and on a thread of
 * their own, so a counter may trail what happened by moments.
 */
public final class FlexiQMetrics implements MeterBinder, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FlexiQMetrics.class);
    /** How often the gauge of jobs by queue and state is read by default. */
    public static final Duration DEFAULT_REFRESH = Duration.ofSeconds(30);
    /** The states the gauge shows: those {@link FlexiQ#countJobs()} counts whole. */
    private static final List<JobState> COUNTED = List.of(JobState.AVAILABLE, JobState.SCHEDULED,
            JobState.RETRYABLE, JobState.RUNNING, JobState.DEAD);

    private final FlexiQ client;
    private final Duration refresh;
    /** Queues the gauge shows from the start. */
    private final List<String> queues;
    private final List<Binding> bindings = new CopyOnWriteArrayList<>();

    /** Meters of {@code client}, its gauge of jobs read every {@link #DEFAULT_REFRESH}. */
    public FlexiQMetrics(FlexiQ client) {
        this(client, DEFAULT_REFRESH);
    }

    /**
     * Meters of {@code client}, its gauge of jobs read every {@code refresh}.
     *
     * @throws IllegalArgumentException unless {@code refresh} is at least 1 s
     */
    public FlexiQMetrics(FlexiQ client, Duration refresh) {
        this(client, refresh, List.of());
    }

    /**
     * Meters of {@code client}, its gauge of jobs read every {@code refresh}, with a series of
     * each of {@code queues} from the start (at 0 while the queue holds no jobs), as for the
     * queues a worker takes jobs from; other queues appear once they hold jobs.
     *
     * @throws IllegalArgumentException unless {@code refresh} is at least 1 s
     */
    public FlexiQMetrics(FlexiQ client, Duration refresh, Collection<String> queues) {
        this.client = Objects.requireNonNull(client, "client");
        if (refresh == null || refresh.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("refresh must be at least 1 s, got " + refresh);
        }
        this.refresh = refresh;
        this.queues = List.copyOf(Objects.requireNonNull(queues, "queues"));
    }

    /**
     * Registers the meters with {@code registry} and starts feeding them. The gauge of jobs is
     * read here, on the caller's thread, so that it has its values as soon as it is bound.
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        Binding binding = new Binding(registry);
        bindings.add(binding);
        client.addListener(binding);
        binding.start();
    }

    /** Stops feeding every registry bound so far; the meters stay registered. Idempotent. */
    @Override
    public void close() {
        for (Binding b : bindings) {
            bindings.remove(b);
            b.stop();
        }
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }

    /** One registry's meters, fed by the client's events and by a gauge reader. */
    private final class Binding implements FlexiQListener {
        private final MeterRegistry registry;
        private final MultiGauge jobs;
        private final ScheduledExecutorService reader;
        /**
         * Queues the gauge shows, each state at 0 when it has no jobs there: those it has read,
         * and those the client's enqueues and jobs name, so that a queue whose jobs finish
         * between two readings still has its series.
         */
        private final Set<String> seenQueues = new ConcurrentSkipListSet<>();

        Binding(MeterRegistry registry) {
            this.registry = registry;
            seenQueues.addAll(queues);
            this.jobs = MultiGauge.builder("flexiq.jobs").description("Jobs by queue and state")
                    .baseUnit("jobs").register(registry);
            this.reader = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "flexiq-metrics-" + client.schema());
                t.setDaemon(true);
                return t;
            });
        }

        void start() {
            readCounts();
            reader.scheduleWithFixedDelay(this::readCounts, refresh.toMillis(), refresh.toMillis(),
                    TimeUnit.MILLISECONDS);
        }

        /** A queue named by an event: one not shown yet is read at once rather than at the next refresh. */
        private void seen(String queue) {
            if (seenQueues.add(queue)) {
                try {
                    reader.execute(this::readCounts);
                } catch (RejectedExecutionException e) {
                    // Stopped meanwhile: nothing is read any more.
                }
            }
        }

        void stop() {
            client.removeListener(this);
            reader.shutdownNow();
        }

        /** Runs on the reader's thread, and once on the binding thread before the reader starts. */
        private synchronized void readCounts() {
            Map<String, Map<JobState, Long>> counts = new TreeMap<>();
            // A queue once seen keeps reading 0 in each state rather than vanishing from dashboards.
            seenQueues.forEach(q -> counts.put(q, new EnumMap<>(JobState.class)));
            try {
                // Completed and cancelled jobs are not shown: the shortest window reads next to none.
                for (JobCount c : client.countJobs(Duration.ofMillis(1))) {
                    counts.computeIfAbsent(c.queue(), q -> new EnumMap<>(JobState.class)).put(c.state(), c.count());
                }
            } catch (RuntimeException e) {
                // The gauge keeps its last reading; the next refresh tries again.
                LOG.debug("reading the counts of jobs for flexiq.jobs failed", e);
                return;
            }
            seenQueues.addAll(counts.keySet());
            List<MultiGauge.Row<?>> rows = new ArrayList<>();
            counts.forEach((queue, byState) -> {
                for (JobState state : COUNTED) {
                    rows.add(MultiGauge.Row.of(Tags.of("queue", queue, "state", lower(state)),
                            byState.getOrDefault(state, 0L)));
                }
            });
            jobs.register(rows, true);
        }

        @Override
        public void onEnqueue(EnqueueEvent e) {
            seen(e.queue());
            String outcome = e.conflict() ? "conflict" : lower(e.outcome().orElseThrow());
            Counter.builder("flexiq.enqueues").description("Enqueue entries by how they were decided")
                    .tags("task", e.task(), "outcome", outcome).register(registry).increment();
        }

        @Override
        public void onJob(JobEvent e) {
            seen(e.queue());
            switch (e.kind()) {
                case STARTED -> e.startLatency().ifPresent(latency ->
                        Timer.builder("flexiq.start.latency").description("From a job's due time to its handler's start")
                                .tags("task", e.task(), "queue", e.queue()).register(registry).record(latency));
                case COMPLETED -> attempt(e, "completed");
                case RETRIED -> attempt(e, "failed");
                case DEAD_LETTERED -> {
                    attempt(e, "failed");
                    Counter.builder("flexiq.dead.letters").description("Jobs dead-lettered")
                            .tags("task", e.task()).register(registry).increment();
                }
                case RESCUED -> {
                    attempt(e, "failed");
                    Counter.builder("flexiq.rescues")
                            .description("Jobs put back to work after their worker's lease passed")
                            .tags("task", e.task()).register(registry).increment();
                }
                case RECORDED_LATE -> Counter.builder("flexiq.late.outcomes")
                        .description("Outcomes recorded after their lease passed and a rescue had moved the job")
                        .tags("task", e.task()).register(registry).increment();
                default -> { }
            }
        }

        private void attempt(JobEvent e, String result) {
            Counter.builder("flexiq.attempts").description("Attempts by how they ended")
                    .tags("task", e.task(), "result", result).register(registry).increment();
            e.handlerDuration().ifPresent(d -> Timer.builder("flexiq.handler.duration")
                    .description("How long handlers ran").tags("task", e.task(), "result", result)
                    .register(registry).record(d));
        }
    }
}
