package io.flexiq;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * A running worker, as it registered itself (see {@link FlexiQ#workers()}). Each {@link Worker}
 * registers as it starts, heartbeats every third of its lease and removes its registration as
 * it stops; maintenance removes the registration of a worker that has not heartbeat for a whole
 * lease (its process died), as the leases of its jobs pass and they are rescued.
 *
 * @param id unique per worker
 * @param name the worker's name in its process, which its threads' names start with
 * @param host the host it runs on
 * @param pid its process id
 * @param queues the queues it takes jobs from
 * @param tasks the tasks it has handlers for
 * @param concurrency how many jobs it runs at once
 * @param lease its lease
 * @param version the FlexiQ version it runs
 * @param startedAt when it started
 * @param lastHeartbeat its last heartbeat, by PostgreSQL's clock
 */
public record RegisteredWorker(String id, String name, String host, long pid, List<String> queues,
        List<String> tasks, int concurrency, Duration lease, String version, Instant startedAt,
        Instant lastHeartbeat) {
    /** Copies the lists. */
    public RegisteredWorker {
        queues = List.copyOf(queues);
        tasks = List.copyOf(tasks);
    }
}
