package io.flexiq;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * One of the racing processes of {@link CrossProcessRaceTest}: 16 threads enqueue over the same
 * 100 keys, all starting at one wall-clock instant; prints "key id" per call.
 */
public final class RaceChild {
    static final int THREADS = 16;
    static final int KEYS = 100;

    private RaceChild() {}

    /** Arguments: database URL, schema, start time in epoch millis. */
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String schema = args[1];
        long startAt = Long.parseLong(args[2]);
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).poolSize(THREADS).build()) {
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            List<Future<List<String>>> results = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int offset = t * 7;
                results.add(pool.submit(() -> {
                    while (System.currentTimeMillis() < startAt) {
                        Thread.onSpinWait();
                    }
                    List<String> lines = new ArrayList<>();
                    for (int i = 0; i < KEYS; i++) {
                        int k = (i + offset) % KEYS;
                        String id = queue.enqueue(EnqueueTest.CHARGE, new EnqueueTest.Order(k, k),
                                EnqueueOptions.builder().uniqueKey("race-" + k).build());
                        lines.add("race-" + k + " " + id);
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
}
