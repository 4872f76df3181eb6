package io.flexiq;

import java.util.List;
import java.util.Objects;

/**
 * One entry of a batch for {@link FlexiQ#enqueueMany(java.util.List)}: a task, its payload and
 * the entry's own options. Immutable.
 *
 * @param <T> the payload type
 */
public final class EnqueueRequest<T> {
    private final Task<T> task;
    private final T payload;
    private final EnqueueOptions options;

    private EnqueueRequest(Task<T> task, T payload, EnqueueOptions options) {
        this.task = Task.require(task);
        this.payload = payload;
        this.options = Objects.requireNonNull(options, "options");
    }

    /** Returns {@code requests}, after checking that neither it nor any of its entries is null. */
    static <L extends List<? extends EnqueueRequest<?>>> L requireEntries(L requests) {
        Objects.requireNonNull(requests, "requests");
        // By iteration, not get(i): a linked list would be walked from its start for each entry.
        int i = 0;
        for (EnqueueRequest<?> request : requests) {
            if (request == null) {
                throw new NullPointerException("requests holds null at index " + i);
            }
            i++;
        }
        return requests;
    }

    /** An entry with default options. */
    public static <T> EnqueueRequest<T> of(Task<T> task, T payload) {
        return new EnqueueRequest<>(task, payload, EnqueueOptions.defaults());
    }

    /** An entry with its own options. */
    public static <T> EnqueueRequest<T> of(Task<T> task, T payload, EnqueueOptions options) {
        return new EnqueueRequest<>(task, payload, options);
    }

    /** The task. */
    public Task<T> task() {
        return task;
    }

    /** The payload. */
    public T payload() {
        return payload;
    }

    /** The options. */
    public EnqueueOptions options() {
        return options;
    }
}
