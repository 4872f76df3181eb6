package io.flexiq;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * One of the processes of {@link FlowControlTest}: 8 threads send debounced or throttled
 * updates over the test's keys, spread over the given span from one wall-clock instant, and
 * print one line per call: "key stamp outcome reason jobId startMicros endMicros".
 */
public final class FlowChild {
    static final int THREADS = 8;
    static final int KEYS = 10;
    static final String WARM_UP = "warm-up";
    /** What starts each line that reports a call, so that the parent reads nothing else. */
    static final String CALL = "call ";
    static final Task<FlowControlTest.Update> UPDATE = Task.of("flow_update", FlowControlTest.Update.class);

    private FlowChild() {}

    /** Arguments: URL, schema, "debounce" or "throttle", mode's period in ms, start (epoch ms), calls, span ms, process number. */
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String schema = args[1];
        boolean debounce = args[2].equals("debounce");
        Duration period = Duration.ofMillis(Long.parseLong(args[3]));
        long startAt = Long.parseLong(args[4]);
        int calls = Integer.parseInt(args[5]);
        long span = Long.parseLong(args[6]);
        String process = args[7];
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).poolSize(THREADS).build()) {
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            List<Future<List<String>>> results = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                int mine = calls / THREADS + (t < calls % THREADS ? 1 : 0);
                results.add(pool.submit(() -> {
                    // Warm-up on a queue of its own, so that loading the native library and
                    // compiling the call path make no pause in the measured calls.
                    for (int w = 0; w < 20; w++) {
                        queue.enqueueWithResult(UPDATE, new FlowControlTest.Update("warm", "w" + w), EnqueueOptions
                                .builder().queue(WARM_UP).uniqueKey("warm-" + process + "-" + thread).debounce(period)
                                .build());
                    }
                    List<String> lines = new ArrayList<>();
                    for (int i = 0; i < mine; i++) {
                        // Each call has its moment in the span, so the calls spread evenly.
                        long at = startAt + span * (i * THREADS + thread) / Math.max(1, calls);
                        long wait = at - System.currentTimeMillis();
                        if (wait > 0) {
                            Thread.sleep(wait);
                        }
                        String key = "flow-" + ((i * THREADS + thread) % KEYS);
                        String stamp = "p" + process + "-t" + thread + "-" + i;
                        long start = micros();
                        EnqueueOptions.Builder options = EnqueueOptions.builder().uniqueKey(key);
                        EnqueueResult r = queue.enqueueWithResult(UPDATE, new FlowControlTest.Update(key, stamp),
                                (debounce ? options.debounce(period) : options.throttle(period)).build());
                        long end = micros();
                        lines.add(CALL + key + " " + stamp + " " + r.outcome() + " "
                                + r.reason().map(Enum::name).orElse("-") + " " + r.jobId() + " " + start + " " + end);
                    }
                    return lines;
                }));
            }
            StringBuilder out = new StringBuilder();
            for (Future<List<String>> f : results) {
                for (String line : f.get()) {
                    out.append(line).append('\n');
                }
            }
            pool.shutdown();
            System.out.print(out);
        }
    }

    static long micros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }
}
