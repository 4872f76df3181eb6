package io.flexiq.internal.worker;

/** Where a job's checkpoints live, for its {@code JobContext}. */
public interface Checkpoints {
    /** The value stored under {@code name}, or null. */
    byte[] load(String name);

    /** Stores a value; false when the attempt no longer holds its job. */
    boolean save(String name, byte[] value);
}
