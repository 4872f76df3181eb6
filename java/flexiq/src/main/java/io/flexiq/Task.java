package io.flexiq;

import io.flexiq.internal.Limits;
import java.util.Objects;

/**
 * A named kind of job and the type of its payload, usually kept in a constant:
 *
 * <pre>{@code
 * static final Task<Order> CHARGE_CUSTOMER =
 *         Task.of("charge_customer", Order.class).idempotent(true);
 * }</pre>
 *
 * <p>A task marked {@linkplain #idempotent(boolean) idempotent} derives a dedup key from its name
 * and serialized payload on every enqueue that sets no explicit key. Instances are immutable.
 *
 * @param <T> the payload type
 */
public final class Task<T> {
    private final String name;
    private final Class<T> payloadType;
    private final boolean idempotent;

    private Task(String name, Class<T> payloadType, boolean idempotent) {
        this.name = name;
        this.payloadType = payloadType;
        this.idempotent = idempotent;
    }

    /**
     * Names a task and its payload type.
     *
     * @throws IllegalArgumentException if the name is empty, longer than 255 bytes of UTF-8,
     *     contains a NUL character or is not valid UTF-16 (an unpaired surrogate)
     */
    public static <T> Task<T> of(String name, Class<T> payloadType) {
        Limits.taskName(name);
        Objects.requireNonNull(payloadType, "payloadType");
        return new Task<>(name, payloadType, false);
    }

    /**
     * {@code task} itself; {@link IllegalArgumentException} when it is null, as every call that
     * takes a task says (see docs/limits-and-errors.md).
     */
    static <T> Task<T> require(Task<T> task) {
        if (task == null) {
            throw new IllegalArgumentException("task must not be null");
        }
        return task;
    }

    /** Returns a copy of this task whose enqueues derive a dedup key unless a call says otherwise. */
    public Task<T> idempotent(boolean idempotent) {
        return new Task<>(name, payloadType, idempotent);
    }

    /** The task's name, as stored and as hashed into auto-derived keys. */
    public String name() {
        return name;
    }

    /** The payload type handlers receive. */
    public Class<T> payloadType() {
        return payloadType;
    }

    /** Whether enqueues derive a dedup key by default. */
    public boolean isIdempotent() {
        return idempotent;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Task)) {
            return false;
        }
        Task<?> other = (Task<?>) o;
        return name.equals(other.name)
                && payloadType.equals(other.payloadType)
                && idempotent == other.idempotent;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, payloadType, idempotent);
    }

    @Override
    public String toString() {
        return "Task[" + name + ", " + payloadType.getSimpleName() + (idempotent ? ", idempotent]" : "]");
    }
}
