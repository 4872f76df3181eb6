package io.flexiq;

/**
 * How many jobs of a queue are in a state (see {@link FlexiQ#countJobs()}).
 *
 * @param queue the queue
 * @param state the state
 * @param count how many of its jobs are in it, at least 1
 */
public record JobCount(String queue, JobState state, long count) {}
