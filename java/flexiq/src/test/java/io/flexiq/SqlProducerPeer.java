package io.flexiq;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Arrays;

/**
 * The Java side of tests/check_sql_producer.py, which enqueues through the SQL function
 * {@code enqueue} and checks that the Java API deduplicates against it: migrates the schema,
 * then enqueues each request of the command line with the default {@link CanonicalJsonSerializer}
 * and prints "jobId OUTCOME" per request, in order.
 */
public final class SqlProducerPeer {
    private SqlProducerPeer() {}

    /**
     * Arguments: database URL, schema, then requests, each either {@code auto TASK JSON} (a key
     * derived from task and payload: {@code idempotent(true)}) or {@code key KEY TASK JSON} (an
     * {@code idempotencyKey}). With no request it only migrates.
     */
    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        try (FlexiQ queue = FlexiQ.builder(args[0]).schema(args[1]).poolSize(1).migrate(true).build()) {
            int i = 2;
            while (i < args.length) {
                EnqueueResult result;
                if (args[i].equals("auto")) {
                    Task<JsonNode> task = Task.of(args[i + 1], JsonNode.class).idempotent(true);
                    result = queue.enqueueWithResult(task, json.readTree(args[i + 2]));
                    i += 3;
                } else if (args[i].equals("key")) {
                    Task<JsonNode> task = Task.of(args[i + 2], JsonNode.class);
                    result = queue.enqueueWithResult(task, json.readTree(args[i + 3]),
                            EnqueueOptions.builder().idempotencyKey(args[i + 1]).build());
                    i += 4;
                } else {
                    throw new IllegalArgumentException("expected auto or key at "
                            + Arrays.asList(args).subList(i, args.length));
                }
                System.out.println(result.jobId() + " " + result.outcome());
            }
        }
    }
}
